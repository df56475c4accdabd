import Testing
@testable import JSON

private func escaped(_ s: String) -> String {
    var out: [UInt8] = []
    JSONEncoding.appendEscapedString(s, to: &out)
    return String(decoding: out, as: UTF8.self)
}

private func integer(_ value: Int64) -> String {
    var out: [UInt8] = []
    JSONEncoding.appendInteger(value, to: &out)
    return String(decoding: out, as: UTF8.self)
}

private func number(_ value: Double) -> String {
    var out: [UInt8] = []
    JSONEncoding.appendNumber(value, to: &out)
    return String(decoding: out, as: UTF8.self)
}

@Test func escapesQuoteBackslashAndControls() {
    #expect(escaped("plain") == #""plain""#)
    #expect(escaped("a\"b\\c") == #""a\"b\\c""#)
    #expect(escaped("l1\nl2\tx\r\u{08}\u{0C}") == #""l1\nl2\tx\r\b\f""#)
    #expect(escaped("\u{00}\u{1F}") == #""\u0000\u001f""#)
    #expect(escaped("") == #""""#)
}

@Test func keepsNonASCIIRaw() {
    #expect(escaped("é😀/\u{7F}\u{2028}") == "\"é😀/\u{7F}\u{2028}\"")
}

@Test func appendsToExistingBytes() {
    var out = Array("{\"a\":".utf8)
    JSONEncoding.appendEscapedString("x", to: &out)
    out.append(0x7D)
    #expect(String(decoding: out, as: UTF8.self) == #"{"a":"x"}"#)
}

@Test func printsIntegers() {
    #expect(integer(0) == "0")
    #expect(integer(7) == "7")
    #expect(integer(-7) == "-7")
    #expect(integer(1_718_000_000_123) == "1718000000123")
    #expect(integer(Int64.max) == "9223372036854775807")
    #expect(integer(Int64.min) == "-9223372036854775808")
}

@Test func printsIntegralDoublesWithoutFraction() {
    #expect(number(3.0) == "3")
    #expect(number(-42.0) == "-42")
    #expect(number(9_007_199_254_740_991.0) == "9007199254740991")
    #expect(number(1.5) == "1.5")
    #expect(number(0.1) == "0.1")
}

@Test func printsNonFiniteAsNull() {
    #expect(number(.nan) == "null")
    #expect(number(.infinity) == "null")
    #expect(number(-.infinity) == "null")
}

@Test func largeDoublesStayParseable() throws {
    for value in [1e300, 9_007_199_254_740_992.0 * 4, 1e-7, -2.5e-300] {
        let text = number(value)
        #expect(try JSONValue.parse(text).doubleValue == value, "\(text)")
    }
}

@Test func aByteToEscapeIsFoundAtEveryPositionOfALongString() {
    // The scan passes over eight plain bytes at a time: each special byte, at each offset
    // within and across those words, is escaped as a byte-by-byte scan would.
    for special in ["\"", "\\", "\n", "\u{01}", "\u{1F}"] {
        for position in 0..<20 {
            let plain = String(repeating: "x", count: 20)
            let text = String(plain.prefix(position)) + special + String(plain.dropFirst(position))
            let expected = "\"" + String(plain.prefix(position)) + escaped(special).dropFirst().dropLast()
                + String(plain.dropFirst(position)) + "\""
            #expect(escaped(text) == expected, "\(special.debugDescription) at \(position)")
        }
    }
    #expect(escaped("0123456789abcdéf\u{2028}xyz") == "\"0123456789abcdéf\u{2028}xyz\"")
}

@Test func aStringIsPlainExactlyWhenNothingInItIsEscaped() {
    func isPlain(_ text: String) -> Bool {
        Array(text.utf8).withUnsafeBufferPointer { JSONEncoding.isPlain($0) }
    }
    for length in 0..<20 {
        let plain = String(repeating: "x", count: length)
        #expect(isPlain(plain))
        for special in ["\"", "\\", "\n", "\u{01}", "\u{1F}"] {
            for position in 0...length {
                let text = String(plain.prefix(position)) + special + String(plain.dropFirst(position))
                #expect(!isPlain(text), "\(special.debugDescription) at \(position) of \(length)")
            }
        }
    }
    #expect(isPlain("0123456789abcdéf\u{2028}xyz \u{7F}"))
}
