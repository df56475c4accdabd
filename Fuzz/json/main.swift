import FuzzSupport
import JSON

// The JSON parser (Sources/JSON/JSONParser*.swift) and serializer on arbitrary bytes, under the
// limits a peer's message gets.
//
// Invariants: a rejection points inside the input; an accepted document, serialized, parses
// back to an equal value, and serializing that gives the very same bytes (sorted keys make the
// output deterministic, which snapshots rely on).

Fuzzer.run { data in
    let limits = JSONLimits()
    let value: JSONValue
    do throws(JSONError) {
        value = try JSONValue.parse(data, limits: limits)
    } catch {
        precondition(error.offset >= 0 && error.offset <= max(data.count, limits.maxBytes), "error offset \(error.offset) outside the input")
        return
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
