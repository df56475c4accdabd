import FuzzSupport
import JSON

// The JSON parser (Sources/JSON/JSONParser*.swift) and serializer on arbitrary bytes, under the
// limits a peer's message gets.
//
// Invariants: a rejection points inside the input; an accepted document, serialized, parses
// back to an equal value, and serializing that gives the very same bytes (sorted keys make the
// output deterministic, which snapshots rely on). Parsing into an object's members (a chat
// request's way) accepts and rejects exactly the same documents, with the same error, and gives
// the object's members.

Fuzzer.run { data in
    let limits = JSONLimits()
    let members = Result { () throws(JSONError) in try JSONValue.parseMembers(data, limits: limits) }
    let value: JSONValue
    do throws(JSONError) {
        value = try JSONValue.parse(data, limits: limits)
    } catch {
        precondition(error.offset >= 0 && error.offset <= max(data.count, limits.maxBytes), "error offset \(error.offset) outside the input")
        guard case .failure(let membersError) = members else { preconditionFailure("parseMembers accepted what parse rejects: \(error)") }
        precondition(membersError == error, "parseMembers failed otherwise: \(membersError), parse: \(error)")
        return
    }
    switch members {
    case .failure(let error):
        preconditionFailure("parseMembers rejected what parse accepts: \(error)")
    case .success(let list?):
        precondition(value == .object(Dictionary(uniqueKeysWithValues: list.map { ($0.key, $0.value) })),
                     "the members differ from the object")
    case .success(nil):
        precondition(value.objectValue == nil, "parseMembers did not see an object")
    }
    let serialized = value.serialized
    let reparsed: JSONValue
    do throws(JSONError) {
        reparsed = try JSONValue.parse(serialized, limits: limits)
    } catch {
        preconditionFailure("the serialized form does not parse: \(error); \(String(decoding: serialized, as: UTF8.self))")
    }
    precondition(reparsed == value, "the round trip changed the value: \(value) became \(reparsed)")
    precondition(reparsed.serialized == serialized, "serializing again gave different bytes")
}
