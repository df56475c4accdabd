import FuzzSupport
import JSON
@testable import Chat

// The `/ws` request decoder: a text message parsed as `ChatService.received` parses it, read into
// a `ChatRequest` (Sources/Chat/ChatRequest.swift) and its arguments, and answered with an error
// reply that echoes the request's id (Sources/Chat/JSONWriter.swift).
//
// Invariants: a request is accepted exactly when `op` is a string and `id` is absent, a string
// or a number; string arguments come back as they were sent, `null` as absent, other types as
// an error; a page size is within 1...200; the reply is valid JSON carrying the same id; read
// from the ranges of its members in its bytes, the request reads the same.

let configuration = ChatConfiguration()
let limits = JSONLimits(maxDepth: 32, maxBytes: configuration.maxRequestBytes)

/// The names the handlers read with `string`, `required` and `limit`.
let argumentNames = ["op", "id", "email", "password", "name", "token", "group", "invite", "user", "message", "text", "before", "after", "since", "avatar", "clientId", "imageUrl", "limit"]

Fuzzer.run { data in
    guard case .object(let object)? = try? JSONValue.parse(data, limits: limits) else { return }
    checkReadFromBytes(Array(data))
    let request: ChatRequest
    do throws(ChatError) {
        request = try ChatRequest(object)
    } catch {
        let idIsValid = switch object["id"] {
        case nil, .string?, .integer?, .number?: true
        default: false
        }
        precondition(!idIsValid || object["op"]?.stringValue == nil, "a valid envelope was refused: \(error)")
        reply(id: nil, error: error)
        return
    }
    precondition(request.op == object["op"]?.stringValue, "the op changed")
    precondition(request.id == object["id"], "the id changed")
    for name in argumentNames + Array(object.keys) {
        let sent = object[name]
        let string = Result { () throws(ChatError) in try request.string(name) }
        switch sent {
        case nil, .null?:
            precondition(string == .success(nil), "an absent argument read as \(string)")
        case .string(let value)?:
            precondition(string == .success(value), "a string argument read as \(string)")
            precondition((try? request.required(name)) == value, "a required string was refused")
        default:
            precondition((try? string.get()) == nil, "a \(String(describing: sent)) argument read as a string")
        }
    }
    switch Result(catching: { () throws(ChatError) in try request.limit() }) {
    case .success(let limit):
        precondition((1...200).contains(limit), "a page size of \(limit)")
    case .failure(let error):
        precondition(object["limit"] != nil, "an absent limit was refused")
        reply(id: request.id, error: error)
    }
    reply(id: request.id, error: ChatError(.badRequest, "unknown op `\(request.op)`"))
}

/// A request read from the ranges of its members (as `ChatService.received` reads most) is
/// refused exactly when the one made of its parsed members is, and reads the same.
func checkReadFromBytes(_ bytes: [UInt8]) {
    guard let spans = try? JSONValue.parseMemberSpans(bytes, limits: limits),
          let members = try? JSONValue.parseMembers(bytes, limits: limits)
    else { return }
    let fromSpans = Result { () throws(ChatError) in try ChatRequest(bytes, spans: spans) }
    let fromMembers = Result { () throws(ChatError) in try ChatRequest(members) }
    switch (fromSpans, fromMembers) {
    case (.success(let read), .success(let parsed)):
        precondition(read.op == parsed.op && read.id == parsed.id, "the envelope reads otherwise from the bytes")
        for name in argumentNames + members.map(\.key) {
            precondition(read[name] == parsed[name], "\(name) reads otherwise from the bytes")
        }
    case (.failure(let readError), .failure(let parsedError)):
        precondition(readError.message == parsedError.message, "refused otherwise from the bytes: \(readError.message)")
    default:
        preconditionFailure("read from the bytes \(fromSpans), from the members \(fromMembers)")
    }
}

/// Writes the error reply as `ChatService.fail` does and checks it parses with the same id.
func reply(id: JSONValue?, error: ChatError) {
    var writer = JSONWriter(op: "error")
    if let id { writer.value("id", id) }
    writer.string("code", error.code.rawValue)
    writer.string("message", error.message)
    let bytes = writer.finished()
    guard case .object(let parsed)? = try? JSONValue.parse(bytes, limits: .trustedFile) else {
        preconditionFailure("the reply is not a JSON object: \(String(decoding: bytes, as: UTF8.self))")
    }
    precondition(parsed["id"] == id, "the reply's id \(String(describing: parsed["id"])) is not the request's")
    precondition(parsed["message"]?.stringValue == error.message, "the reply's message changed")
}
