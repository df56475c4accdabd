import Testing
@testable import JSON

@Test func serializesCompactWithSortedKeys() {
    let value: JSONValue = ["b": 1, "a": [true, nil, "x"], "c": ["z": 1.5, "y": [:]]]
    #expect(value.jsonString == #"{"a":[true,null,"x"],"b":1,"c":{"y":{},"z":1.5}}"#)
}

@Test func sortedKeysMakeEqualTreesByteIdentical() {
    var first: [String: JSONValue] = [:]
    var second: [String: JSONValue] = [:]
    let keys = (0..<200).map { "k\($0)" }
    for key in keys { first[key] = .string(key) }
    for key in keys.reversed() { second[key] = .string(key) }
    #expect(JSONValue.object(first).serialized == JSONValue.object(second).serialized)
}

@Test func roundTripsValues() throws {
    let values: [JSONValue] = [
        nil, true, false, 0, -1, 1_718_000_000_123, .integer(.max), .integer(.min),
        1.25, -0.001, 6.02e23, "", "quote \" backslash \\ newline \n nul \u{0}", "😀é",
        [], [:], [[[1]]], ["nested": ["deep": ["list": [1, "two", 3.5, nil]]]],
    ]
    for value in values {
        #expect(try JSONValue.parse(value.serialized) == value, "\(value.jsonString)")
    }
}

@Test func integralNumberRoundTripsAsEqualInteger() throws {
    let value = JSONValue.number(12.0)
    #expect(value.jsonString == "12")
    let parsed = try JSONValue.parse(value.serialized)
    #expect(parsed == value)
    #expect(parsed == .integer(12))
}

@Test func roundTripsBigDocument() throws {
    var messages: [String: JSONValue] = [:]
    for i in 0..<20_000 {
        messages["-N\(100_000 + i)abcdefghijk"] = [
            "message": .string("hello number \(i) \"quoted\" ünïcode"),
            "user": .string("uid\(i % 17)"),
            "createdAt": .integer(1_718_000_000_000 + Int64(i)),
            "imageUrl": nil,
            "receivedBy": ["uid1": .integer(1_718_000_000_500 + Int64(i))],
        ]
    }
    let tree: JSONValue = ["Messages": ["g1": .object(messages)], "Users": [:], "Groups": [:], "Auth": [:]]
    let bytes = tree.serialized
    #expect(bytes.count > 1_000_000)
    let parsed = try JSONValue.parse(bytes, limits: .trustedFile)
    #expect(parsed == tree)
    #expect(parsed.serialized == bytes)
}
