import Glibc
import JSON

/// One parsed request: `{"op": "...", "id": ..., ...arguments}`.
struct ChatRequest {
    let op: String
    /// The request's `id` (a string or number), echoed in the reply; nil when absent.
    let id: JSONValue?
    /// Every member, `op` and `id` included (keys distinct).
    private let arguments: Arguments
    /// When the request arrived (monotonic nanoseconds), for the delivery latency of a `send`.
    var arrival: UInt64 = 0

    /// A list, not a dictionary: a request has a handful of members and is read a few times,
    /// so comparing keys costs less than hashing each one to build a dictionary and again to
    /// look it up (a `send` hashed ten keys).
    private enum Arguments {
        /// Parsed members, in the order they came.
        case members([JSONParser.Member])
        /// The request's bytes and where each member lies in them (`JSONParser.MemberSpan`): a
        /// value becomes a `JSONValue` when it is read. Most requests come this way: a `send`
        /// reads two of its values and looks for a dozen names it does not have, and making a
        /// string of every key and value it has was a sixth of the loop's instructions per
        /// acknowledged send.
        case spans([UInt8], [JSONParser.MemberSpan])
    }

    // The two initializers of a client's request set the fields themselves: one that delegated
    // to another built the request in a temporary and then copied it out and destroyed the
    // temporary (the runtime's value witnesses, some 370 instructions per request; BENCHMARKS.md).

    /// Validates the envelope of an object's `members` (distinct keys, as the parser gives them).
    init(_ members: [JSONParser.Member]) throws(ChatError) {
        let arguments = Arguments.members(members)
        (op, id) = try Self.envelope(arguments)
        self.arguments = arguments
    }

    /// Validates the envelope of the object whose members lie in `text` at `spans`, as
    /// `JSONParser.parseDocumentSpans()` found them.
    init(_ text: [UInt8], spans: [JSONParser.MemberSpan]) throws(ChatError) {
        let arguments = Arguments.spans(text, spans)
        (op, id) = try Self.envelope(arguments)
        self.arguments = arguments
    }

    /// Validates the envelope of `object` (the publish API's body).
    init(_ object: [String: JSONValue]) throws(ChatError) {
        try self.init(object.map { ($0.key, $0.value, 0) })
    }

    /// The request's `op` and `id`, checked.
    private static func envelope(_ arguments: Arguments) throws(ChatError) -> (op: String, id: JSONValue?) {
        let id = value("id", in: arguments)
        switch id {
        case nil, .string?, .integer?, .number?: break
        default: throw ChatError(.badRequest, "`id` must be a string or a number")
        }
        guard let op = value("op", in: arguments)?.stringValue else { throw ChatError.missing("op") }
        return (op, id)
    }

    /// The member named `name`, if present.
    subscript(name: String) -> JSONValue? { Self.value(name, in: arguments) }

    private static func value(_ name: String, in arguments: Arguments) -> JSONValue? {
        switch arguments {
        case .members(let members): value(name, in: members)
        case .spans(let text, let spans): value(name, in: text, spans)
        }
    }

    private static func value(_ name: String, in members: [JSONParser.Member]) -> JSONValue? {
        // Lengths first: `==` on two strings that differ takes the runtime's slow path (it
        // looks for canonical equivalence), and a lookup passes over most keys. Only a key of
        // another length that `==` still calls equal to a name is told apart by this: one
        // spelling "K" with U+212A KELVIN SIGN, ";" with U+037E or "`" with U+1FEF. No
        // protocol name holds those letters, and JSON compares keys by their code units anyway.
        let length = name.utf8.count
        for index in members.indices where members[index].key.utf8.count == length && members[index].key == name {
            return members[index].value
        }
        return nil
    }

    /// The value named `name` among `spans` of `text`: an integer as the parser read it, a
    /// plain string made from its bytes, any other value parsed (the whole request was checked
    /// already, so this cannot fail). The keys of spans are ASCII without escapes: compared as
    /// bytes.
    private static func value(_ name: String, in text: [UInt8], _ spans: [JSONParser.MemberSpan]) -> JSONValue? {
        guard let span = name.utf8.withContiguousStorageIfAvailable({ span(named: $0, in: text, spans) })
            ?? Array(name.utf8).withUnsafeBufferPointer({ span(named: $0, in: text, spans) })
        else { return nil }
        if let integer = span.integer { return .integer(integer) }
        if span.isPlainString {
            return .string(String(decoding: text[span.value.lowerBound + 1..<span.value.upperBound - 1], as: UTF8.self))
        }
        return text.withUnsafeBytes { bytes in
            try? JSONValue.parse(UnsafeRawBufferPointer(rebasing: bytes[span.value]), limits: .trustedFile)
        }
    }

    private static func span(
        named name: UnsafeBufferPointer<UInt8>, in text: [UInt8], _ spans: [JSONParser.MemberSpan]
    ) -> JSONParser.MemberSpan? {
        text.withUnsafeBufferPointer { text in
            for span in spans where span.key.count == name.count
                && memcmp(text.baseAddress! + span.key.lowerBound, name.baseAddress!, name.count) == 0 {
                return span
            }
            return nil
        }
    }

    /// An optional string argument; present with another type is an error.
    func string(_ name: String) throws(ChatError) -> String? {
        switch self[name] {
        case nil, .null?: return nil
        case .string(let value)?: return value
        default: throw ChatError.missing(name)
        }
    }

    /// A required string argument.
    func required(_ name: String) throws(ChatError) -> String {
        guard let value = try string(name) else { throw ChatError.missing(name) }
        return value
    }

    /// A page size: `fallback` when absent, at least 1 and at most `maximum`.
    func limit(fallback: Int = 50, maximum: Int = 200) throws(ChatError) -> Int {
        guard let value = self["limit"], !value.isNull else { return fallback }
        guard let number = value.intValue, number >= 1 else {
            throw ChatError(.badRequest, "`limit` must be a whole number from 1 to \(maximum)")
        }
        return min(number, maximum)
    }
}
