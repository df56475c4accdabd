import JSON

/// The journal line format: `{"op":"set","path":["Messages","g1","m1"],"value":{...}}` and a
/// newline, keys in sorted order like every other JSON the server writes.
extension Mutation {
    /// Why a JSON line is not a mutation.
    public struct DecodingError: Error, Sendable, Equatable {
        /// A phrase for `StoreError.corrupt`.
        public var reason: String
    }

    /// Appends this mutation as one journal line, newline included.
    public func appendJournalLine(to out: inout [UInt8]) {
        out.append(contentsOf: Self.opPrefix)
        switch self {
        case .set(let path, let value):
            out.append(contentsOf: Self.setOp)
            Self.appendPath(path, to: &out)
            out.append(contentsOf: Self.valueKey)
            value.serialize(into: &out)
        case .merge(let path, let value):
            out.append(contentsOf: Self.mergeOp)
            Self.appendPath(path, to: &out)
            out.append(contentsOf: Self.valueKey)
            JSONValue.object(value).serialize(into: &out)
        case .delete(let path):
            out.append(contentsOf: Self.deleteOp)
            Self.appendPath(path, to: &out)
        }
        out.append(contentsOf: Self.lineEnd)
    }

    /// The journal line for this mutation, newline included.
    public var journalLine: [UInt8] {
        var out: [UInt8] = []
        appendJournalLine(to: &out)
        return out
    }

    /// Reads a mutation from a parsed journal line.
    public init(journalLine line: JSONValue) throws(DecodingError) {
        guard case .object(let members) = line else {
            throw DecodingError(reason: "the line is not a JSON object")
        }
        guard let op = members["op"]?.stringValue else {
            throw DecodingError(reason: "the line has no \"op\" string")
        }
        guard case .array(let elements)? = members["path"] else {
            throw DecodingError(reason: "the line has no \"path\" array")
        }
        var path: [String] = []
        path.reserveCapacity(elements.count)
        for element in elements {
            guard case .string(let key) = element else {
                throw DecodingError(reason: "the path holds something other than strings")
            }
            path.append(key)
        }
        switch op {
        case "set":
            guard let value = members["value"] else { throw DecodingError(reason: "a set without \"value\"") }
            // The root is always an object: a snapshot of anything else is refused, so a journal
            // that made one would load once and never again after the next compaction.
            if path.isEmpty, value.objectValue == nil, !value.isNull {
                throw DecodingError(reason: "a set of the root to something other than an object")
            }
            self = .set(path: path, value: value)
        case "merge":
            guard case .object(let value)? = members["value"] else {
                throw DecodingError(reason: "a merge whose \"value\" is not an object")
            }
            self = .merge(path: path, value: value)
        case "delete":
            self = .delete(path: path)
        default:
            throw DecodingError(reason: "unknown op \"\(op)\"")
        }
    }

    private static func appendPath(_ path: [String], to out: inout [UInt8]) {
        out.append(0x5B)
        for (position, key) in path.enumerated() {
            if position > 0 { out.append(0x2C) }
            JSONEncoding.appendEscapedString(key, to: &out)
        }
        out.append(0x5D)
    }

    private static let opPrefix: [UInt8] = Array(#"{"op":"#.utf8)
    private static let setOp: [UInt8] = Array(#""set","path":"#.utf8)
    private static let mergeOp: [UInt8] = Array(#""merge","path":"#.utf8)
    private static let deleteOp: [UInt8] = Array(#""delete","path":"#.utf8)
    private static let valueKey: [UInt8] = Array(#","value":"#.utf8)
    private static let lineEnd: [UInt8] = [0x7D, 0x0A]
}
