import Testing
@testable import JSON

/// Parses `text`, returning the error or nil when it parsed.
private func parseError(_ text: String, limits: JSONLimits = JSONLimits()) -> JSONError? {
    do {
        _ = try JSONValue.parse(text, limits: limits)
        return nil
    } catch {
        return error
    }
}

@Test func parsesScalars() throws {
    #expect(try JSONValue.parse("null") == .null)
    #expect(try JSONValue.parse(" true ") == .bool(true))
    #expect(try JSONValue.parse("false") == .bool(false))
    #expect(try JSONValue.parse("\"hi\"") == .string("hi"))
    #expect(try JSONValue.parse("0") == .integer(0))
    #expect(try JSONValue.parse("-0") == .integer(0))
    #expect(try JSONValue.parse("1.5") == .number(1.5))
    #expect(try JSONValue.parse("-2.5e3") == .number(-2500))
    #expect(try JSONValue.parse("1E2") == .number(100))
}

@Test func parsesIntegersExactly() throws {
    let millis = try JSONValue.parse("1718000000123")
    guard case .integer(let value) = millis else {
        Issue.record("expected an integer case, got \(millis)")
        return
    }
    #expect(value == 1_718_000_000_123)
    #expect(try JSONValue.parse("9223372036854775807").int64Value == Int64.max)
    #expect(try JSONValue.parse("-9223372036854775808").int64Value == Int64.min)
    // One past Int64.max falls back to a double rather than failing or wrapping.
    let big = try JSONValue.parse("9223372036854775808")
    #expect(big.doubleValue == 9_223_372_036_854_775_808.0)
    if case .integer = big { Issue.record("overflowing integer must not stay an integer") }
}

@Test func parsesNestedContainers() throws {
    let value = try JSONValue.parse(#" { "a" : [1, {"b": null}, []], "c": {} } "#)
    #expect(value == ["a": [1, ["b": nil], []], "c": [:]])
    #expect(value["a"]?[1]?["b"] == .null)
}

@Test func decodesEscapes() throws {
    let value = try JSONValue.parse(#""q\"b\\s\/\b\f\n\r\t\u0041\u00e9\u20ac""#)
    #expect(value == .string("q\"b\\s/\u{08}\u{0C}\n\r\tAé€"))
}

@Test func decodesSurrogatePairs() throws {
    #expect(try JSONValue.parse(#""\ud83d\ude00""#) == .string("😀"))
    #expect(try JSONValue.parse(#""x\uD834\uDD1Ey""#) == .string("x𝄞y"))
}

@Test func keepsRawUTF8() throws {
    #expect(try JSONValue.parse("\"héllo 😀 日本\"") == .string("héllo 😀 日本"))
}

@Test func rejectsLoneSurrogates() {
    #expect(parseError(#""ab\ud83d""#) == JSONError(.loneSurrogate, offset: 3))
    #expect(parseError(#""\ud83dx""#) == JSONError(.loneSurrogate, offset: 1))
    #expect(parseError(#""\ude00""#) == JSONError(.loneSurrogate, offset: 1))
    #expect(parseError(#""\ud83d\u0041""#) == JSONError(.loneSurrogate, offset: 1))
}

@Test func rejectsInvalidEscapes() {
    #expect(parseError(#""a\x""#) == JSONError(.invalidEscape, offset: 2))
    #expect(parseError(#""\u12G4""#) == JSONError(.invalidEscape, offset: 5))
}

@Test func rejectsControlCharacters() {
    #expect(parseError("\"a\nb\"") == JSONError(.controlCharacterInString(0x0A), offset: 2))
    #expect(parseError("\"a\\n\u{01}\"") == JSONError(.controlCharacterInString(0x01), offset: 4))
}

@Test func rejectsInvalidUTF8() {
    let cases: [[UInt8]] = [
        [0x22, 0x61, 0xFF, 0x22],             // never valid
        [0x22, 0x61, 0xC0, 0x80, 0x22],       // overlong NUL
        [0x22, 0x61, 0xED, 0xA0, 0x80, 0x22], // encoded surrogate
        [0x22, 0x61, 0xF4, 0x90, 0x80, 0x80, 0x22], // above U+10FFFF
        [0x22, 0x61, 0xE2, 0x82, 0x22],       // truncated sequence
    ]
    for bytes in cases {
        #expect(throws: JSONError(.invalidUTF8, offset: 2)) { try JSONValue.parse(bytes) }
    }
}

@Test func rejectsTrailingCommas() {
    #expect(parseError("[1,2,]") == JSONError(.trailingComma, offset: 5))
    #expect(parseError(#"{"a":1 , }"#) == JSONError(.trailingComma, offset: 9))
}

@Test func rejectsLeadingZeros() {
    #expect(parseError("012") == JSONError(.leadingZero, offset: 0))
    #expect(parseError("[-01]") == JSONError(.leadingZero, offset: 1))
}

@Test func rejectsMalformedNumbers() {
    #expect(parseError("-") == JSONError(.invalidNumber, offset: 1))
    #expect(parseError("1.") == JSONError(.invalidNumber, offset: 2))
    #expect(parseError("1.e5") == JSONError(.invalidNumber, offset: 2))
    #expect(parseError("1e") == JSONError(.invalidNumber, offset: 2))
    #expect(parseError("-a") == JSONError(.invalidNumber, offset: 1))
    #expect(parseError("1e400") == JSONError(.numberOutOfRange, offset: 0))
}

@Test func rejectsUnexpectedBytes() {
    #expect(parseError("[1 2]") == JSONError(.unexpectedByte(0x32, expected: "',' or ']'"), offset: 3))
    #expect(parseError("{1:2}") == JSONError(.unexpectedByte(0x31, expected: "a string key"), offset: 1))
    #expect(parseError(#"{"a" 2}"#) == JSONError(.unexpectedByte(0x32, expected: "':'"), offset: 5))
    #expect(parseError("tru") == JSONError(.unexpectedEnd, offset: 3))
    #expect(parseError("nul1") == JSONError(.unexpectedByte(0x31, expected: "a value"), offset: 3))
    #expect(parseError("// c\n1") == JSONError(.unexpectedByte(0x2F, expected: "a value"), offset: 0))
    #expect(parseError("'a'") == JSONError(.unexpectedByte(0x27, expected: "a value"), offset: 0))
}

@Test func rejectsTruncatedDocuments() {
    #expect(parseError("") == JSONError(.unexpectedEnd, offset: 0))
    #expect(parseError("  ") == JSONError(.unexpectedEnd, offset: 2))
    #expect(parseError("[1,") == JSONError(.unexpectedEnd, offset: 3))
    #expect(parseError(#"{"a":"#) == JSONError(.unexpectedEnd, offset: 5))
    #expect(parseError(#""abc"#) == JSONError(.unexpectedEnd, offset: 4))
    #expect(parseError(#""a\u00"#) == JSONError(.unexpectedEnd, offset: 6))
}

@Test func rejectsTrailingData() {
    #expect(parseError("1 2") == JSONError(.trailingData, offset: 2))
    #expect(parseError("{} x") == JSONError(.trailingData, offset: 3))
}

@Test func rejectsDuplicateKeys() {
    #expect(parseError(#"{"a":1,"a":2}"#) == JSONError(.duplicateKey("a"), offset: 7))
}

@Test func enforcesDepthLimit() throws {
    let ok = String(repeating: "[", count: 32) + String(repeating: "]", count: 32)
    #expect(try JSONValue.parse(ok).arrayValue != nil)
    let deep = String(repeating: "[", count: 33) + String(repeating: "]", count: 33)
    #expect(parseError(deep) == JSONError(.tooDeep(limit: 32), offset: 32))
    let deepObjects = String(repeating: #"{"a":"#, count: 3) + "1}}}"
    #expect(parseError(deepObjects, limits: JSONLimits(maxDepth: 2)) == JSONError(.tooDeep(limit: 2), offset: 10))
}

@Test func survivesHostileNesting() {
    let hostile = String(repeating: "[", count: 1_000_000)
    #expect(parseError(hostile, limits: JSONLimits(maxDepth: 32, maxBytes: .max)) == JSONError(.tooDeep(limit: 32), offset: 32))
}

@Test func enforcesByteLimit() {
    #expect(parseError("[1, 2, 3]", limits: JSONLimits(maxBytes: 8)) == JSONError(.tooLarge(limit: 8), offset: 8))
    #expect(parseError("[1, 2, 3]", limits: JSONLimits(maxBytes: 9)) == nil)
}

@Test func errorsPrintHumanSentences() {
    let error = JSONError(.trailingComma, offset: 7)
    #expect(error.description == "invalid JSON at byte 7: a comma before a closing bracket or brace")
    let control = JSONError(.controlCharacterInString(0x0A), offset: 2)
    #expect(control.description.contains("byte 0x0A"))
    let unexpected = JSONError(.unexpectedByte(0x7D, expected: "a value"), offset: 1)
    #expect(unexpected.description == "invalid JSON at byte 1: found '}' where a value was expected")
}

@Test func nestedObjectsKeepTheirOwnMembers() throws {
    let value = try JSONValue.parse(Array(#"{"a":{"b":1,"c":{"d":[{"e":2},{}]}},"f":{"b":3}}"#.utf8))
    #expect(value == ["a": ["b": 1, "c": ["d": [["e": 2], [:]]]], "f": ["b": 3]])
}

@Test func duplicateKeyInANestedObjectIsReportedAtItsSecondOccurrence() {
    #expect(parseError(#"{"x":{"a":1,"b":{"a":2},"a":3}}"#) == JSONError(.duplicateKey("a"), offset: 24))
}

/// Parses `text` with `parseMembers`: its members' keys and values in order, nil for another
/// value, or the error.
private func members(_ text: String, limits: JSONLimits = JSONLimits()) -> Result<[String]?, JSONError> {
    Result { () throws(JSONError) in
        try JSONValue.parseMembers(Array(text.utf8), limits: limits)?.map(\.key)
    }
}

@Test func membersOfAnObjectComeInDocumentOrderWithNestedValuesParsed() throws {
    let found = try #require(try JSONValue.parseMembers(Array(#" {"op":"send","id":7,"z":{"b":[1,{"c":null}],"a":true},"a":"x"} "#.utf8)))
    #expect(found.map(\.key) == ["op", "id", "z", "a"])
    let z: JSONValue = ["b": [1, ["c": nil]], "a": true]
    #expect(found.map(\.value) == ["send", 7, z, "x"])
    #expect(found.map(\.offset) == [2, 14, 21, 55])
    #expect(try members("{}").get() == [])
}

@Test func membersOfAnythingButAnObjectAreNilAndStillChecked() throws {
    #expect(try members("[1,2]").get() == nil)
    #expect(try members(#" "text" "#).get() == nil)
    #expect(members("[1,]").failure == JSONError(.trailingComma, offset: 3))
    #expect(members("1 2").failure == JSONError(.trailingData, offset: 2))
}

@Test func membersFollowEveryRuleOfTheWholeDocument() {
    #expect(members(#"{"a":1,"a":2}"#).failure == JSONError(.duplicateKey("a"), offset: 7))
    #expect(members(#"{"a":1,"b":2,"b":3,"a":4}"#).failure == JSONError(.duplicateKey("b"), offset: 13))
    // More members than the short search covers: the set finds the repeat.
    let many = (0..<20).map { #""k\#($0)":\#($0)"# }.joined(separator: ",")
    #expect(members("{\(many),\"k19\":0}").failure == JSONError(.duplicateKey("k19"), offset: many.utf8.count + 2))
    #expect((try? members("{\(many)}").get())??.count == 20)
    #expect(members(#"{"x":{"a":1,"a":2}}"#).failure == JSONError(.duplicateKey("a"), offset: 12))
    #expect(members(#"{"a":1} x"#).failure == JSONError(.trailingData, offset: 8))
    #expect(members(#"{"a":1,}"#).failure == JSONError(.trailingComma, offset: 7))
    #expect(members(#"{"a":1"#).failure == JSONError(.unexpectedEnd, offset: 6))
    #expect(members(#"{"a":[1]}"#, limits: JSONLimits(maxDepth: 1)).failure == JSONError(.tooDeep(limit: 1), offset: 5))
    #expect(members(#"{"a":1}"#, limits: JSONLimits(maxBytes: 6)).failure == JSONError(.tooLarge(limit: 6), offset: 6))
}

private extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

@Test func aQuoteEscapeOrControlIsFoundAtEveryPositionOfALongString() throws {
    // The scan passes over eight plain bytes at a time; what ends or interrupts a string is
    // found at each offset within and across those words.
    let plain = String(repeating: "y", count: 20)
    for position in 0..<20 {
        let head = String(plain.prefix(position))
        let tail = String(plain.dropFirst(position))
        #expect(try JSONValue.parse(Array("\"\(head)\"".utf8)) == .string(head))
        #expect(try JSONValue.parse(Array("\"\(head)\\n\(tail)\"".utf8)) == .string(head + "\n" + tail))
        #expect(parseError("\"\(head)\u{01}\(tail)\"") == JSONError(.controlCharacterInString(0x01), offset: 1 + position))
        #expect(try JSONValue.parse(Array("\"\(head)é\(tail)\"".utf8)) == .string(head + "é" + tail))
        var invalid = Array("\"\(head)\(tail)\"".utf8)
        invalid.insert(0xFF, at: 1 + position)
        #expect(throws: JSONError.self) { try JSONValue.parse(invalid) }
    }
}

/// Parses `text` with `parseMemberSpans`: each member's key and value as the text between the
/// ranges, and whether the value is a plain string; nil when spans cannot be given; or the error.
private func spans(_ text: String, limits: JSONLimits = JSONLimits()) -> Result<[String]?, JSONError> {
    let bytes = Array(text.utf8)
    return Result { () throws(JSONError) in
        try JSONValue.parseMemberSpans(bytes, limits: limits)?.map {
            "\(String(decoding: bytes[$0.key], as: UTF8.self))=\(String(decoding: bytes[$0.value], as: UTF8.self))\($0.isPlainString ? " plain" : "")"
        }
    }
}

@Test func spansOfAnObjectPointAtItsKeysAndValues() throws {
    #expect(try spans(#" { "op" : "send","id":7, "z":{"b":[1,{"c":null}]},"a":"x\n", "t":"é" } "#).get()
        == [#"op="send" plain"#, "id=7", #"z={"b":[1,{"c":null}]}"#, #"a="x\n""#, #"t="é" plain"#])
    #expect(try spans("{}").get() == [])
    #expect(try spans(#"{"":""}"#).get() == [#"="" plain"#])
}

@Test func spansCarryTheIntegersTheParserRead() throws {
    let bytes = Array(#"{"op":"send","id":-9223372036854775808,"n":1.5e3,"b":9223372036854775808,"t":true,"z":null,"o":{"a":[1]},"s":"7"}"#.utf8)
    let found = try #require(try JSONValue.parseMemberSpans(bytes))
    #expect(found.map(\.integer) == [nil, Int64.min, nil, nil, nil, nil, nil, nil])
    #expect(try JSONValue.parse(Array(bytes[found[1].value])) == .integer(Int64.min))
}

@Test func spansAreNilWhereTheyCannotStandForTheMembers() throws {
    #expect(try spans("[1,2]").get() == nil)
    #expect(try spans(#" "text" "#).get() == nil)
    // Keys that two spellings may make equal: an escape, or a byte outside ASCII ("K" and
    // U+212A KELVIN SIGN are one key to Swift's `==`).
    #expect(try spans(#"{"\u0061":1}"#).get() == nil)
    #expect(try spans(#"{"a":1,"\u212a":2}"#).get() == nil)
    #expect(try spans(#"{"K":1,"é":2}"#).get() == nil)
    let sixteen = (0..<16).map { #""k\#($0)":\#($0)"# }.joined(separator: ",")
    #expect(try spans("{\(sixteen)}").get()?.count == 16)
    #expect(try spans("{\(sixteen),\"k16\":16}").get() == nil)
}

/// Whatever `parseMembers` refuses, `parseMemberSpans` refuses with the same error, or leaves to
/// it (nil).
@Test func spansFollowEveryRuleOfTheWholeDocument() {
    let refused = [
        #"{"a":1,"a":2}"#, #"{"a":1,"b":2,"b":3,"a":4}"#, #"{"x":{"a":1,"a":2}}"#, #"{"a":1} x"#, #"{"a":1,}"#,
        #"{"a":1"#, #"{"a""#, #"{"a" 1}"#, #"{a:1}"#, #"{"a":}"#, #"{"a":01}"#, #"{"a":"\ud800"}"#, #"{"a":"\q"}"#,
        "{\"a\":\"\u{01}\"}", #"{"a":tru}"#, #"{"a":[1,]}"#, #"{"a":1 "b":2}"#, #"{"a\"#, "{", "{\"a", #"{"a":1,"\u0061":2}"#,
        #"{"K":1,"\u212a":2}"#,
    ]
    for text in refused {
        let expected = members(text).failure
        #expect(expected != nil, "\(text)")
        switch spans(text) {
        case .failure(let error): #expect(error == expected, "\(text)")
        case .success(let found): #expect(found == nil, "\(text) gave \(String(describing: found))")
        }
    }
    var badUTF8 = Array(#"{"a":"xx"}"#.utf8)
    badUTF8[7] = 0xFF
    let badUTF8Members = Result { () throws(JSONError) in try JSONValue.parseMembers(badUTF8) }
    let badUTF8Spans = Result { () throws(JSONError) in try JSONValue.parseMemberSpans(badUTF8) }
    #expect(badUTF8Spans.failure == JSONError(.invalidUTF8, offset: 7))
    #expect(badUTF8Spans.failure == badUTF8Members.failure)
    #expect(spans(#"{"a":[1]}"#, limits: JSONLimits(maxDepth: 1)).failure == JSONError(.tooDeep(limit: 1), offset: 5))
    #expect(spans(#"{"a":1}"#, limits: JSONLimits(maxBytes: 6)).failure == JSONError(.tooLarge(limit: 6), offset: 6))
}
