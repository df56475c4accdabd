/// A JSON document: the values of RFC 8259 as a Swift enum.
///
/// Numbers come in two cases because the document tree stores millisecond timestamps and counts
/// that must survive a round trip exactly: a literal without fraction or exponent that fits in
/// `Int64` parses as `.integer`, everything else as `.number`. Equality compares the two numeric
/// cases by value, so `.integer(5) == .number(5.0)`; this keeps `parse(serialize(v)) == v` true
/// even though an integral `.number` is printed without `.0` and parses back as `.integer`.
///
/// Objects are Swift dictionaries: key order is not kept, and serialization sorts keys so that
/// files are deterministic and push ids (which sort by time) come out in creation order.
public enum JSONValue: Sendable {
    case null
    case bool(Bool)
    /// An exact integer, as parsed from a literal without fraction or exponent.
    case integer(Int64)
    /// Any other number; never NaN or infinite when produced by the parser.
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
}

extension JSONValue: Equatable {
    /// Structural equality in which `.integer` and `.number` compare by numeric value.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null):
            return true
        case let (.bool(a), .bool(b)):
            return a == b
        case let (.integer(a), .integer(b)):
            return a == b
        case let (.number(a), .number(b)):
            return a == b
        case let (.integer(a), .number(b)), let (.number(b), .integer(a)):
            // Int64(exactly:) fails for fractions and out-of-range values, so no rounding
            // can make two different numbers look equal.
            return Int64(exactly: b) == a
        case let (.string(a), .string(b)):
            return a == b
        case let (.array(a), .array(b)):
            return a == b
        case let (.object(a), .object(b)):
            return a == b
        default:
            return false
        }
    }
}

extension JSONValue {
    /// The member named `key` when this is an object, else nil.
    @inlinable
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members[key]
    }

    /// The element at `index` when this is an array and the index is in range, else nil.
    @inlinable
    public subscript(index: Int) -> JSONValue? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }

    /// True for `.null`.
    @inlinable
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The string when this is a string.
    @inlinable
    public var stringValue: String? {
        guard case .string(let value) = self else { return nil }
        return value
    }

    /// The boolean when this is a boolean.
    @inlinable
    public var boolValue: Bool? {
        guard case .bool(let value) = self else { return nil }
        return value
    }

    /// The exact integer when this is an integer, or a `.number` with an integral value in range.
    @inlinable
    public var int64Value: Int64? {
        switch self {
        case .integer(let value): return value
        case .number(let value): return Int64(exactly: value)
        default: return nil
        }
    }

    /// Like `int64Value`, as an `Int`.
    @inlinable
    public var intValue: Int? {
        guard let value = int64Value else { return nil }
        return Int(exactly: value)
    }

    /// The value of either numeric case as a `Double` (large integers may round).
    @inlinable
    public var doubleValue: Double? {
        switch self {
        case .integer(let value): return Double(value)
        case .number(let value): return value
        default: return nil
        }
    }

    /// The members when this is an object.
    @inlinable
    public var objectValue: [String: JSONValue]? {
        guard case .object(let members) = self else { return nil }
        return members
    }

    /// The elements when this is an array.
    @inlinable
    public var arrayValue: [JSONValue]? {
        guard case .array(let elements) = self else { return nil }
        return elements
    }
}
