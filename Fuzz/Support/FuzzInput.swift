/// Reads an input as a few parameter bytes followed by data, and cuts data into pieces.
///
/// Targets take their configuration (limits, window sizes, where to split) from the input
/// itself, so that every finding replays exactly from its saved file.
public struct FuzzInput {
    public private(set) var bytes: ArraySlice<UInt8>

    public init(_ input: UnsafeRawBufferPointer) {
        bytes = Array(input)[...]
    }

    /// The next byte, or 0 when the input is used up.
    public mutating func byte() -> UInt8 {
        bytes.popFirst() ?? 0
    }

    /// The next `count` bytes (fewer at the end of the input).
    public mutating func bytes(_ count: Int) -> [UInt8] {
        let taken = bytes.prefix(count)
        bytes = bytes.dropFirst(taken.count)
        return Array(taken)
    }

    /// The next piece: a two-byte big-endian length, then that many bytes (fewer at the end).
    public mutating func lengthPrefixed() -> [UInt8] {
        let length = Int(byte()) << 8 | Int(byte())
        return bytes(length)
    }

    /// Everything not read yet.
    public mutating func rest() -> [UInt8] {
        defer { bytes = [] }
        return Array(bytes)
    }

    /// Whether the input is used up.
    public var isEmpty: Bool { bytes.isEmpty }
}

/// Cuts `bytes` into consecutive pieces whose sizes cycle through a pattern drawn from `seed`
/// (sizes 1 to 16), so one input is also fed as many differently split reads.
public func pieces(of bytes: [UInt8], seed: UInt8) -> [[UInt8]] {
    var state = UInt32(seed) &+ 1
    var result: [[UInt8]] = []
    var start = 0
    while start < bytes.count {
        // A small linear congruential generator: varied, but the same cuts for the same seed.
        state = state &* 1_103_515_245 &+ 12_345
        let size = Int((state >> 16) % 16) + 1
        let end = min(start + size, bytes.count)
        result.append(Array(bytes[start..<end]))
        start = end
    }
    return result
}
