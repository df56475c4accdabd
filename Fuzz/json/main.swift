import FuzzSupport
import JSON

// The JSON parser (Sources/JSON/JSONParser*.swift) and serializer on arbitrary bytes, under the
// limits a peer's message gets.
//
// Invariants: a rejection points inside the input; an accepted document, serialized, parses
// back to an equal value, and serializing that gives the very same bytes (sorted keys make the
// output deterministic, which snapshots rely on). Parsing into an object's members (a chat
// request's way) accepts and rejects exactly the same documents, with the same error, and gives
// the object's members. Parsing into the ranges of an object's members (`parseMemberSpans`, how a
// chat request is read first) rejects what `parse` rejects with the same error or gives nil,
// accepts nothing else, and gives ranges that parse to the object's keys and values (and each
// integer value as it parsed).

Fuzzer.run { data in
    let limits = JSONLimits()
    let members = Result { () throws(JSONError) in try JSONValue.parseMembers(data, limits: limits) }
    let bytes = Array(data)
    let spans = Result { () throws(JSONError) in try JSONValue.parseMemberSpans(bytes, limits: limits) }
    let value: JSONValue
    do throws(JSONError) {
        value = try JSONValue.parse(data, limits: limits)
    } catch {
        precondition(error.offset >= 0 && error.offset <= max(data.count, limits.maxBytes), "error offset \(error.offset) outside the input")
        guard case .failure(let membersError) = members else { preconditionFailure("parseMembers accepted what parse rejects: \(error)") }
        precondition(membersError == error, "parseMembers failed otherwise: \(membersError), parse: \(error)")
        switch spans {
        case .failure(let spansError): precondition(spansError == error, "parseMemberSpans failed otherwise: \(spansError), parse: \(error)")
        case .success(let found): precondition(found == nil, "parseMemberSpans accepted what parse rejects: \(error)")
        }
        return
    }
    switch spans {
    case .failure(let error):
        preconditionFailure("parseMemberSpans rejected what parse accepts: \(error)")
    case .success(let found?):
        checkSpans(found, of: bytes, against: value)
    case .success(nil):
        // Only where the ranges cannot stand for the members: not an object, more than 16
        // members, or a key with an escape or a byte outside ASCII.
        if case .object(let object) = value, object.count <= 16 {
            let raw = String(decoding: bytes, as: UTF8.self)
            precondition(raw.contains("\\") || bytes.contains { $0 >= 0x80 }, "parseMemberSpans gave nil for plain keys")
        }
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

/// The ranges of an accepted object's members are its keys and values.
func checkSpans(_ spans: [JSONParser.MemberSpan], of bytes: [UInt8], against value: JSONValue) {
    guard case .object(let object) = value else { preconditionFailure("spans of something that is not an object") }
    precondition(spans.count == object.count, "\(spans.count) spans for \(object.count) members")
    for span in spans {
        let key = String(decoding: bytes[span.key], as: UTF8.self)
        guard let member = object[key] else { preconditionFailure("a span's key \(key) is not a member") }
        let parsed = try? JSONValue.parse(Array(bytes[span.value]), limits: .trustedFile)
        precondition(parsed == member, "the span of \(key) parses to \(String(describing: parsed)), not \(member)")
        let plain = member.stringValue != nil && !bytes[span.value].contains(UInt8(ascii: "\\"))
        precondition(span.isPlainString == plain, "the span of \(key) says plain: \(span.isPlainString)")
        let integer: Int64? = if case .integer(let number) = member { number } else { nil }
        precondition(span.integer == integer, "the span of \(key) carries the integer \(String(describing: span.integer))")
    }
}
