/// The four-byte key a client XORs over every payload byte (RFC 6455 §5.3).
///
/// Unmasking is on the path of every received byte, so it works eight bytes at a time: the key
/// is repeated into a 64-bit word whose bytes line up with the payload's bytes in memory.
struct MaskingKey: Sendable {
    /// The key's four bytes exactly as they lay on the wire, loaded without byte swapping: a
    /// payload word loaded the same way then lines up with it byte for byte on any endianness.
    var bits: UInt32

    init(bits: UInt32) {
        self.bits = bits
    }

    /// XORs `source` with the key into `target`, which may be the same memory (in-place unmask).
    ///
    /// `phase` is how many payload bytes of the frame came before `source`: the key restarts
    /// at every frame, not at every read, so a payload split across reads continues where the
    /// previous piece stopped.
    func apply(from source: UnsafeRawBufferPointer, to target: UnsafeMutableRawBufferPointer, phase: Int) {
        let count = source.count
        precondition(target.count >= count, "unmask target smaller than its source")
        guard count > 0, let input = source.baseAddress, let output = target.baseAddress else { return }
        let key = rotated(by: phase)
        // Two copies of the key side by side: the low and high halves land on the same four
        // memory bytes whatever the machine's endianness, so one XOR covers eight payload bytes.
        let wideKey = UInt64(key) | UInt64(key) << 32
        var index = 0
        while index + 32 <= count {
            // Four independent words per iteration let the CPU overlap the loads and stores.
            let word0 = input.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            let word1 = input.loadUnaligned(fromByteOffset: index + 8, as: UInt64.self)
            let word2 = input.loadUnaligned(fromByteOffset: index + 16, as: UInt64.self)
            let word3 = input.loadUnaligned(fromByteOffset: index + 24, as: UInt64.self)
            output.storeBytes(of: word0 ^ wideKey, toByteOffset: index, as: UInt64.self)
            output.storeBytes(of: word1 ^ wideKey, toByteOffset: index + 8, as: UInt64.self)
            output.storeBytes(of: word2 ^ wideKey, toByteOffset: index + 16, as: UInt64.self)
            output.storeBytes(of: word3 ^ wideKey, toByteOffset: index + 24, as: UInt64.self)
            index += 32
        }
        while index + 8 <= count {
            let word = input.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            output.storeBytes(of: word ^ wideKey, toByteOffset: index, as: UInt64.self)
            index += 8
        }
        withUnsafeBytes(of: key) { keyBytes in
            // `index` is a multiple of eight here, so the rotated key starts over at byte 0.
            while index < count {
                let byte = input.load(fromByteOffset: index, as: UInt8.self)
                output.storeBytes(of: byte ^ keyBytes[index & 3], toByteOffset: index, as: UInt8.self)
                index += 1
            }
        }
    }

    /// The key as it applies to a piece starting `phase` bytes into the payload: its memory
    /// bytes rotated so that byte 0 is key byte `phase % 4`.
    func rotated(by phase: Int) -> UInt32 {
        let shift = phase & 3
        guard shift != 0 else { return bits }
        var result: UInt32 = 0
        withUnsafeBytes(of: bits) { keyBytes in
            withUnsafeMutableBytes(of: &result) { resultBytes in
                for index in 0..<4 {
                    resultBytes[index] = keyBytes[(index + shift) & 3]
                }
            }
        }
        return result
    }
}
