import JSON
import Testing
@testable import Chat

@Test func aMemberIsFoundAmongKeysOfItsLengthAndOfOthers() throws {
    let request = try ChatRequest([
        ("id", .integer(3), 0), ("op", .string("send"), 0), ("grou", .string("short"), 0),
        ("group", .string("g1"), 0), ("groupId", .string("long"), 0), ("text", .string("hi"), 0),
        ("type", .string("note"), 0),
    ])
    #expect(request.op == "send")
    #expect(request.id == .integer(3))
    #expect(request["group"] == .string("g1"))
    #expect(request["grou"] == .string("short"))
    #expect(request["groupId"] == .string("long"))
    #expect(request["text"] == .string("hi"))
    #expect(request["type"] == .string("note"))
    #expect(request["gr"] == nil)
    #expect(request["clientId"] == nil)
}

/// A name is matched by its code units, as JSON compares keys: a key that Swift's `==` calls
/// equal to it (U+212A KELVIN SIGN is canonically equivalent to "K") is another key.
@Test func aKeyIsMatchedByItsCodeUnitsNotByCanonicalEquivalence() throws {
    #expect("\u{212A}" == "K")
    let request = try ChatRequest([("op", .string("ping"), 0), ("\u{212A}", .integer(1), 0)])
    #expect(request["K"] == nil)
    #expect(request["\u{212A}"] == .integer(1))
    // Both at once (the parser refuses them as a duplicate; built here directly): each its own.
    let both = try ChatRequest([("op", .string("ping"), 0), ("\u{212A}", .integer(1), 0), ("K", .integer(2), 0)])
    #expect(both["K"] == .integer(2))
}
