import Bytes

/// Writing a value as compact JSON text.
extension JSONValue {
    /// Appends this value as compact JSON (no spaces), object keys sorted, to `out`.
    ///
    /// Sorted keys make snapshots deterministic (two equal trees give byte-identical files)
    /// and list push ids, which sort by time, in creation order.
    public func serialize(into out: inout [UInt8]) {
        switch self {
        case .null:
            out.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])
        case .bool(true):
            out.append(contentsOf: [0x74, 0x72, 0x75, 0x65])
        case .bool(false):
            out.append(contentsOf: [0x66, 0x61, 0x6C, 0x73, 0x65])
        case .integer(let value):
            JSONEncoding.appendInteger(value, to: &out)
        case .number(let value):
            JSONEncoding.appendNumber(value, to: &out)
        case .string(let value):
            JSONEncoding.appendEscapedString(value, to: &out)
        case .array(let elements):
            out.append(ASCII.openBracket)
            var first = true
            for element in elements {
                if !first { out.append(ASCII.comma) }
                first = false
                element.serialize(into: &out)
            }
            out.append(ASCII.closeBracket)
        case .object(let members):
            out.append(ASCII.openBrace)
            var first = true
            for (key, value) in members.sorted(by: { $0.key < $1.key }) {
                if !first { out.append(ASCII.comma) }
                first = false
                JSONEncoding.appendEscapedString(key, to: &out)
                out.append(ASCII.colon)
                value.serialize(into: &out)
            }
            out.append(ASCII.closeBrace)
        }
    }

    /// This value as compact JSON bytes.
    public var serialized: [UInt8] {
        var out: [UInt8] = []
        serialize(into: &out)
        return out
    }

    /// This value as compact JSON text.
    public var jsonString: String {
        String(decoding: serialized, as: UTF8.self)
    }
}
