import Testing
@testable import JSON

@Test func accessorsReturnMatchingCases() {
    let value: JSONValue = ["s": "text", "i": 42, "d": 2.5, "b": true, "n": nil, "a": [1, 2], "o": ["k": "v"]]
    #expect(value["s"]?.stringValue == "text")
    #expect(value["i"]?.int64Value == 42)
    #expect(value["i"]?.intValue == 42)
    #expect(value["i"]?.doubleValue == 42)
    #expect(value["d"]?.doubleValue == 2.5)
    #expect(value["d"]?.intValue == nil)
    #expect(value["b"]?.boolValue == true)
    #expect(value["n"]?.isNull == true)
    #expect(value["a"]?.arrayValue == [1, 2])
    #expect(value["o"]?.objectValue == ["k": "v"])
    #expect(value["missing"] == nil)
    #expect(value["s"]?.intValue == nil)
    #expect(value["a"]?[5] == nil)
    #expect(JSONValue.string("x")["key"] == nil)
}

@Test func integralDoubleGivesExactInteger() {
    #expect(JSONValue.number(1_718_000_000_123).int64Value == 1_718_000_000_123)
    #expect(JSONValue.number(1e30).int64Value == nil)
}

@Test func numericCasesCompareByValue() {
    #expect(JSONValue.integer(3) == .number(3.0))
    #expect(JSONValue.number(3.0) == .integer(3))
    #expect(JSONValue.integer(3) != .number(3.5))
    #expect(JSONValue.integer(.max) != .number(9_223_372_036_854_775_808.0))
    #expect(JSONValue.string("3") != .integer(3))
    #expect(JSONValue.bool(true) != .integer(1))
}

@Test func literalsBuildExpectedCases() {
    let value: JSONValue = ["a": 1, "b": 1.5, "c": "s", "d": false, "e": nil, "f": []]
    #expect(value == .object([
        "a": .integer(1), "b": .number(1.5), "c": .string("s"), "d": .bool(false), "e": .null, "f": .array([]),
    ]))
}
