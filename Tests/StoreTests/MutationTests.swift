import Testing
import JSON
@testable import Store

@Test func writesDocumentedLineFormat() {
    let line = Mutation.set(path: ["Messages", "g1", "m1"], value: ["message": "hi", "createdAt": 5]).journalLine
    #expect(String(decoding: line, as: UTF8.self) == #"{"op":"set","path":["Messages","g1","m1"],"value":{"createdAt":5,"message":"hi"}}"# + "\n")
    let delete = Mutation.delete(path: ["Users", "u\"1"]).journalLine
    #expect(String(decoding: delete, as: UTF8.self) == #"{"op":"delete","path":["Users","u\"1"]}"# + "\n")
}

@Test func journalLinesRoundTrip() throws {
    let mutations: [Mutation] = [
        .set(path: ["Users", "u1"], value: ["name": "Ådå\n", "avatar": nil, "createdAt": 1_718_000_000_123]),
        .merge(path: ["Groups", "g1", "userList"], value: ["u2": true, "u3": nil]),
        .delete(path: ["Auth", "u1"]),
        .set(path: [], value: DocumentTree.empty),
    ]
    for mutation in mutations {
        var line = mutation.journalLine
        #expect(line.last == 0x0A)
        line.removeLast()
        #expect(!line.contains(0x0A), "a line may not contain a raw newline")
        #expect(try Mutation(journalLine: JSONValue.parse(line)) == mutation)
    }
}

@Test func rejectsMalformedLines() throws {
    let cases: [(String, String)] = [
        ("[1]", "the line is not a JSON object"),
        (#"{"path":[]}"#, "the line has no \"op\" string"),
        (#"{"op":"set","path":"a"}"#, "the line has no \"path\" array"),
        (#"{"op":"set","path":[1]}"#, "the path holds something other than strings"),
        (#"{"op":"set","path":[]}"#, "a set without \"value\""),
        (#"{"op":"merge","path":[],"value":3}"#, "a merge whose \"value\" is not an object"),
        (#"{"op":"set","path":[],"value":[]}"#, "a set of the root to something other than an object"),
        (#"{"op":"push","path":[]}"#, "unknown op \"push\""),
    ]
    for (text, reason) in cases {
        #expect(throws: Mutation.DecodingError(reason: reason)) { try Mutation(journalLine: JSONValue.parse(text)) }
    }
}
