import Testing
@testable import WebSocket

private func hex(_ bytes: [UInt8]) -> String {
    bytes.map { byte in
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }.joined()
}

@Test func acceptKeyMatchesRFCExample() {
    #expect(WebSocketHandshake.acceptKey(for: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
}

@Test func sha1OfABC() {
    #expect(hex(SHA1.hash(Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
}

@Test func sha1OfEmptyMessage() {
    #expect(hex(SHA1.hash([UInt8]())) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
}

@Test func sha1OfFourHundredFortyEightBitMessage() {
    let message = Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
    #expect(hex(SHA1.hash(message)) == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
}

@Test func sha1OfMessageSpanningTwoPaddingBlocks() {
    let message = Array("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu".utf8)
    #expect(hex(SHA1.hash(message)) == "a49b2446a02c645bf419f995b67091253a04a259")
}

@Test func acceptsSixteenByteKey() {
    #expect(WebSocketHandshake.isValidKey("dGhlIHNhbXBsZSBub25jZQ=="))
    #expect(WebSocketHandshake.isValidKey("AAAAAAAAAAAAAAAAAAAAAA=="))
}

@Test func rejectsKeysThatAreNotSixteenBytes() {
    #expect(!WebSocketHandshake.isValidKey(""))
    #expect(!WebSocketHandshake.isValidKey("dGhlIHNhbXBsZSBub25jZQ="))
    #expect(!WebSocketHandshake.isValidKey("AAAAAAAAAAAAAAAAAAAAAAAA"))
    #expect(!WebSocketHandshake.isValidKey("AAAAAAAAAAAAAAAAAAAAA==="))
    #expect(!WebSocketHandshake.isValidKey("dGhlIHNhbXBsZSBub25jZQ==AAAA"))
    #expect(!WebSocketHandshake.isValidKey("dGhlIHNhbXBsZSBub25jZ!=="))
}
