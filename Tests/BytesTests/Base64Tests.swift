import Bytes
import Testing

private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

@Test func base64URLEncodesRFC4648Vectors() {
    let vectors = [
        "": "", "f": "Zg", "fo": "Zm8", "foo": "Zm9v", "foob": "Zm9vYg", "fooba": "Zm9vYmE", "foobar": "Zm9vYmFy",
    ]
    for (plain, encoded) in vectors {
        #expect(Base64.encode(bytes(plain), .url) == encoded)
        #expect(Base64.decode(encoded, .url) == bytes(plain))
    }
    #expect(Base64.encode([0xFB, 0xFF, 0xBF], .url) == "-_-_")
}

@Test func base64URLRoundTripsEveryLengthAndByte() {
    var data: [UInt8] = []
    for length in 0..<300 {
        #expect(Base64.decode(Base64.encode(data, .url), .url) == data)
        data.append(UInt8(truncatingIfNeeded: length &* 37 &+ 11))
    }
}

@Test func base64URLDecodeRejectsMalformedInput() {
    #expect(Base64.decode("Zg==", .url) == nil)  // padding
    #expect(Base64.decode("Z", .url) == nil)  // impossible length
    #expect(Base64.decode("Zh", .url) == nil)  // non-zero unused bits
    #expect(Base64.decode("Zm9v!", .url) == nil)  // outside the alphabet
    #expect(Base64.decode("+/8", .url) == nil)  // standard, not URL, alphabet
    #expect(Base64.decode("Zm9vé", .url) == nil)  // non-ASCII
}


@Test func base64EncodesRFC4648Vectors() {
    let vectors = ["": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=", "foobar": "Zm9vYmFy"]
    for (plain, encoded) in vectors {
        #expect(Base64.encode(bytes(plain)) == encoded)
        #expect(Base64.decode(encoded) == bytes(plain))
    }
}

@Test func base64RejectsMalformedText() {
    #expect(Base64.decode("Zg=") == nil)
    #expect(Base64.decode("Z===") == nil)
    #expect(Base64.decode("Zg==Zg==") == nil)
    #expect(Base64.decode("Zm9*") == nil)
    #expect(Base64.decode("Zm=v") == nil)
}

@Test func standardDecodeRejectsTheURLAlphabet() {
    #expect(Base64.decode("-_-_") == nil)
    #expect(Base64.encode([0xFB, 0xFF, 0xBF]) == "+/+/")
}
