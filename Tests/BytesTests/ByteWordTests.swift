import Bytes
import Testing

private func special(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x22 || byte == 0x5C }

private func word(_ bytes: [UInt8]) -> UInt64 {
    bytes.withUnsafeBufferPointer { ByteWord.load($0, at: 0) }
}

/// What a byte-by-byte scan finds: the bytes before the first special one.
private func plainPrefix(_ bytes: [UInt8]) -> Int { bytes.firstIndex(where: special) ?? 8 }

@Test func everyByteValueInEveryPositionIsJudgedAsABytewiseScanWould() {
    for position in 0..<8 {
        for value in 0...255 {
            // The other bytes are plain, and among them the ones that would carry a borrow
            // furthest: 0x20 (just above the controls), 0x23 and 0x5D (just above the quote
            // and the backslash), and 0xFF.
            for filler: UInt8 in [0x20, 0x23, 0x5D, 0x41, 0xFF] {
                var bytes = [UInt8](repeating: filler, count: 8)
                bytes[position] = UInt8(value)
                #expect(ByteWord.plainPrefix(word(bytes)) == plainPrefix(bytes), "byte \(value) at \(position)")
            }
        }
    }
}

@Test func wordsOfRandomBytesAreJudgedAsABytewiseScanWould() {
    // A fixed linear congruential sequence, so the test is the same on every run.
    var state: UInt64 = 7
    for _ in 0..<100_000 {
        var bytes: [UInt8] = []
        for _ in 0..<8 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            // Mostly plain bytes, so that words without a special byte, or with several, come up.
            let raw = UInt8(truncatingIfNeeded: state >> 56)
            let plain: UInt8 = raw < 0x23 || raw == 0x5C ? 0x41 : raw
            bytes.append(state >> 40 & 7 == 0 ? raw : plain)
        }
        #expect(ByteWord.plainPrefix(word(bytes)) == plainPrefix(bytes), "\(bytes)")
        for count in 0...8 {
            #expect(ByteWord.hasNonASCII(word(bytes), first: count) == bytes.prefix(count).contains { $0 >= 0x80 })
        }
    }
}
