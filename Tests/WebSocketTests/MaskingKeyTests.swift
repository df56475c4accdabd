import Testing
@testable import WebSocket

private func naiveUnmask(_ bytes: [UInt8], key: [UInt8], phase: Int) -> [UInt8] {
    bytes.enumerated().map { $0.element ^ key[($0.offset + phase) % 4] }
}

private func key(_ bytes: [UInt8]) -> MaskingKey {
    MaskingKey(bits: bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) })
}

@Test func unmasksLikeTheByteLoopForEveryLengthAndPhase() {
    let keyBytes: [UInt8] = [0x12, 0x34, 0xA5, 0xFE]
    for length in 0...80 {
        let input = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        for phase in 0..<8 {
            var output = [UInt8](repeating: 0, count: length)
            input.withUnsafeBytes { source in
                output.withUnsafeMutableBytes { target in
                    key(keyBytes).apply(from: source, to: target, phase: phase)
                }
            }
            #expect(output == naiveUnmask(input, key: keyBytes, phase: phase), "length \(length) phase \(phase)")
        }
    }
}

@Test func unmasksInPlace() {
    let keyBytes: [UInt8] = [1, 2, 3, 4]
    let original = (0..<45).map { UInt8($0) }
    var buffer = original
    buffer.withUnsafeMutableBytes { target in
        key(keyBytes).apply(from: UnsafeRawBufferPointer(target), to: target, phase: 3)
    }
    #expect(buffer == naiveUnmask(original, key: keyBytes, phase: 3))
}

@Test func unmaskingInPiecesEqualsUnmaskingWhole() {
    let keyBytes: [UInt8] = [9, 8, 7, 6]
    let input = (0..<100).map { UInt8($0) }
    var output = [UInt8](repeating: 0, count: 100)
    for (start, end) in [(0, 3), (3, 13), (13, 14), (14, 51), (51, 100)] {
        input.withUnsafeBytes { source in
            output.withUnsafeMutableBytes { target in
                key(keyBytes).apply(
                    from: UnsafeRawBufferPointer(rebasing: source[start..<end]),
                    to: UnsafeMutableRawBufferPointer(rebasing: target[start..<end]),
                    phase: start
                )
            }
        }
    }
    #expect(output == naiveUnmask(input, key: keyBytes, phase: 0))
}
