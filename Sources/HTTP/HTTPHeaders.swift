import Bytes

/// The header fields of a request or response: ordered `(name, value)` pairs.
///
/// Names are kept as received (or as added) and matched ignoring ASCII case, as RFC 9110 §5.1
/// requires; order and repetition are preserved because some fields (`Sec-WebSocket-Extensions`,
/// `Sec-WebSocket-Protocol`) may be sent several times and their order carries preference.
/// A head has a handful of fields, so a linear scan beats hashing here.
public struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    public typealias Element = (name: String, value: String)

    private var fields: [Element] = []

    /// Empty headers.
    public init() {}

    /// Headers holding `fields` in the given order.
    public init(_ fields: [(String, String)]) {
        self.fields = fields.map { (name: $0.0, value: $0.1) }
    }

    /// Headers from a literal; the literal's order is kept.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// The number of fields, repeated names counted once per line.
    public var count: Int { fields.count }

    public var isEmpty: Bool { fields.isEmpty }

    public func makeIterator() -> IndexingIterator<[Element]> {
        fields.makeIterator()
    }

    /// The first value of the field called `name` (ASCII case-insensitive), or nil.
    public subscript(_ name: String) -> String? {
        for field in fields where HTTPGrammar.namesEqual(field.name, name) {
            return field.value
        }
        return nil
    }

    /// Every value of the field called `name`, in the order received.
    public func values(_ name: String) -> [String] {
        fields.compactMap { HTTPGrammar.namesEqual($0.name, name) ? $0.value : nil }
    }

    /// Whether a field called `name` is present.
    public func contains(_ name: String) -> Bool {
        fields.contains { HTTPGrammar.namesEqual($0.name, name) }
    }

    /// Whether a comma-separated field (`Connection`, `Upgrade`) lists `token`, ignoring case.
    ///
    /// Every line of the field counts, since `Connection: keep-alive` followed by
    /// `Connection: Upgrade` means the same as one line listing both (RFC 9110 §5.3).
    public func containsToken(_ token: String, in name: String) -> Bool {
        let wanted = token.utf8
        for field in fields where HTTPGrammar.namesEqual(field.name, name) {
            for element in field.value.utf8.split(separator: UInt8(ascii: ",")) {
                let trimmed = element.drop(while: HTTPGrammar.isWhitespace)
                    .reversed().drop(while: HTTPGrammar.isWhitespace).reversed()
                if !trimmed.isEmpty && trimmed.count == wanted.count
                    && zip(trimmed, wanted).allSatisfy({ ASCII.lowercased($0) == ASCII.lowercased($1) })
                {
                    return true
                }
            }
        }
        return false
    }

    /// Appends a field, keeping any earlier field of the same name.
    public mutating func add(_ name: String, _ value: String) {
        fields.append((name: name, value: value))
    }

    /// Removes every field called `name`, then adds one with `value`.
    public mutating func replaceOrAdd(_ name: String, _ value: String) {
        remove(name)
        add(name, value)
    }

    /// Removes every field called `name`.
    public mutating func remove(_ name: String) {
        fields.removeAll { HTTPGrammar.namesEqual($0.name, name) }
    }
}

extension HTTPHeaders: Equatable {
    /// Equal when both hold the same fields in the same order, names compared exactly.
    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.elementsEqual(rhs.fields) { $0.name == $1.name && $0.value == $1.value }
    }
}

extension HTTPHeaders: CustomStringConvertible {
    /// The fields one per line as `name: value`, for logs and test failures.
    public var description: String {
        fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
    }
}
