import JSON

/// One parsed request: `{"op": "...", "id": ..., ...arguments}`.
struct ChatRequest {
    let op: String
    /// The request's `id` (a string or number), echoed in the reply; nil when absent.
    let id: JSONValue?
    /// Every member, `op` and `id` included, in the order they came (keys distinct).
    ///
    /// A list, not a dictionary: a request has a handful of members and is read a few times,
    /// so comparing keys costs less than hashing each one to build a dictionary and again to
    /// look it up (a `send` hashed ten keys).
    let members: [JSONParser.Member]
    /// When the request arrived (monotonic nanoseconds), for the delivery latency of a `send`.
    var arrival: UInt64 = 0

    /// Validates the envelope of an object's `members` (distinct keys, as the parser gives them).
    init(_ members: [JSONParser.Member]) throws(ChatError) {
        self.members = members
        let id = Self.value("id", in: members)
        switch id {
        case nil, .string?, .integer?, .number?: self.id = id
        default: throw ChatError(.badRequest, "`id` must be a string or a number")
        }
        guard let op = Self.value("op", in: members)?.stringValue else { throw ChatError.missing("op") }
        self.op = op
    }

    /// Validates the envelope of `object` (the publish API's body).
    init(_ object: [String: JSONValue]) throws(ChatError) {
        try self.init(object.map { ($0.key, $0.value, 0) })
    }

    /// The member named `name`, if present.
    subscript(name: String) -> JSONValue? { Self.value(name, in: members) }

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
