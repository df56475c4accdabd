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

/// A request read from where its members lie in its bytes answers every name as the request
/// made of its parsed members does.
@Test func aRequestReadFromItsBytesReadsAsOneMadeOfItsMembers() throws {
    let requests = [
        #"{"op":"send","group":"-P7U4Nk4RpNVeIo6CG_C","text":"hello","id":12}"#,
        #" { "id" : "a\"b" , "op" : "send" , "text" : "line\nnext \u00e9 \ud83d\ude00", "clientId" : null } "#,
        #"{"op":"history","limit":50.5,"before":"x","extra":{"deep":[1,true,false,null,-2e3]},"empty":""}"#,
        #"{"op":"ping","id":-9223372036854775808,"text":"é"}"#,
    ]
    let names = ["op", "id", "group", "text", "clientId", "limit", "before", "extra", "empty", "imageUrl", "", "opx", "o"]
    for text in requests {
        let bytes = Array(text.utf8)
        let spans = try #require(try JSONValue.parseMemberSpans(bytes))
        let members = try #require(try JSONValue.parseMembers(bytes))
        let fromSpans = try ChatRequest(bytes, spans: spans)
        let fromMembers = try ChatRequest(members)
        #expect(fromSpans.op == fromMembers.op)
        #expect(fromSpans.id == fromMembers.id)
        for name in names {
            #expect(fromSpans[name] == fromMembers[name], "\(name) of \(text)")
        }
    }
    let noOp = try #require(try JSONValue.parseMemberSpans(Array(#"{"op":1}"#.utf8)))
    #expect(throws: ChatError.self) { try ChatRequest(Array(#"{"op":1}"#.utf8), spans: noOp) }
    let badId = try #require(try JSONValue.parseMemberSpans(Array(#"{"op":"ping","id":[1]}"#.utf8)))
    #expect(throws: ChatError.self) { try ChatRequest(Array(#"{"op":"ping","id":[1]}"#.utf8), spans: badId) }
}
