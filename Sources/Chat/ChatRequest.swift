import JSON

/// One parsed request: `{"op": "...", "id": ..., ...arguments}`.
struct ChatRequest {
    let op: String
    /// The request's `id` (a string or number), echoed in the reply; nil when absent.
    let id: JSONValue?
    let arguments: [String: JSONValue]
    /// When the request arrived (monotonic nanoseconds), for the delivery latency of a `send`.
    var arrival: UInt64 = 0

    /// Validates the envelope of `object`.
    init(_ object: [String: JSONValue]) throws(ChatError) {
        let id = object["id"]
        switch id {
        case nil, .string?, .integer?, .number?: self.id = id
        default: throw ChatError(.badRequest, "`id` must be a string or a number")
        }
        guard let op = object["op"]?.stringValue else { throw ChatError.missing("op") }
        self.op = op
        self.arguments = object
    }

    /// An optional string argument; present with another type is an error.
    func string(_ name: String) throws(ChatError) -> String? {
        switch arguments[name] {
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
        guard let value = arguments["limit"], !value.isNull else { return fallback }
        guard let number = value.intValue, number >= 1 else {
            throw ChatError(.badRequest, "`limit` must be a whole number from 1 to \(maximum)")
        }
        return min(number, maximum)
    }
}
