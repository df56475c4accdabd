import Testing
import Crypto

/// Hex string of bytes, for comparing with published vectors.
private func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    for byte in bytes {
        text.append(digits[Int(byte >> 4)])
        text.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: text, as: UTF8.self)
}

private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

@Test func pbkdf2MatchesPublishedSHA256Vectors() {
    #expect(hex(Crypto.pbkdf2SHA256(password: bytes("password"), salt: bytes("salt"), iterations: 1))
        == "120fb6cffcf8b32c43e7225256c4f837a86548c92ccc35480805987cb70be17b")
    #expect(hex(Crypto.pbkdf2SHA256(password: bytes("password"), salt: bytes("salt"), iterations: 2))
        == "ae4d0c95af6b46d32d0adff928f06dd02a303f8ef3c251dfd6e2d85a95474c43")
    // RFC 7914 §11, first PBKDF2-HMAC-SHA256 vector (64-byte output).
    #expect(hex(Crypto.pbkdf2SHA256(password: bytes("passwd"), salt: bytes("salt"), iterations: 1, keyLength: 64))
        == "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc"
        + "49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783")
}

@Test func hmacMatchesRFC4231() {
    #expect(hex(Crypto.hmacSHA256(key: [UInt8](repeating: 0x0b, count: 20), message: bytes("Hi There")))
        == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
    #expect(hex(Crypto.hmacSHA256(key: bytes("Jefe"), message: bytes("what do ya want for nothing?")))
        == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
}

@Test func hmacAcceptsEmptyKeyAndMessage() {
    #expect(hex(Crypto.hmacSHA256(key: [], message: []))
        == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
}

@Test func sha256MatchesKnownDigests() {
    #expect(hex(Crypto.sha256(bytes("abc"))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    #expect(hex(Crypto.sha256([])) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
}

@Test func randomBytesHaveTheRequestedLengthAndDiffer() {
    let first = Crypto.randomBytes(32)
    let second = Crypto.randomBytes(32)
    #expect(first.count == 32)
    #expect(first != second)
    #expect(Crypto.randomBytes(0).isEmpty)
}

@Test func constantTimeEqualsComparesContentAndLength() {
    #expect(Crypto.constantTimeEquals([1, 2, 3], [1, 2, 3]))
    #expect(!Crypto.constantTimeEquals([1, 2, 3], [1, 2, 4]))
    #expect(!Crypto.constantTimeEquals([1, 2, 3], [1, 2]))
    #expect(Crypto.constantTimeEquals([], []))
}
