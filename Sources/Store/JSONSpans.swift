/// Finds the members of a JSON object in raw bytes without parsing their values, so that a
/// snapshot of gigabytes can be converted one group at a time.
///
/// Only the structure is checked here (strings, brackets, separators); each value is parsed
/// later by `JSONValue.parse`, which reports anything else that is wrong with it.
enum JSONSpans {
    struct Failure: Error {
        /// Byte offset of the problem.
        var offset: Int
        var reason: String
    }

    /// The members of the object in `bytes[range]`: each key's bytes as a JSON string
    /// (quotes included) and its value's byte range.
    static func members(_ bytes: UnsafeRawBufferPointer, in range: Range<Int>) throws(Failure) -> [(key: Range<Int>, value: Range<Int>)] {
        var result: [(key: Range<Int>, value: Range<Int>)] = []
        try forEachMember(bytes, in: range) { key, value in result.append((key, value)) }
        return result
    }

    /// Calls `body` with each member of the object in `bytes[range]`, as `members` lists them,
    /// without collecting them (a checkpoint looks at two members of every record).
    static func forEachMember(
        _ bytes: UnsafeRawBufferPointer, in range: Range<Int>, _ body: (_ key: Range<Int>, _ value: Range<Int>) -> Void
    ) throws(Failure) {
        var position = skipSpace(bytes, range.lowerBound, range.upperBound)
        guard position < range.upperBound, bytes[position] == UInt8(ascii: "{") else {
            throw Failure(offset: position, reason: "expected an object")
        }
        position = skipSpace(bytes, position + 1, range.upperBound)
        if position < range.upperBound, bytes[position] == UInt8(ascii: "}") { return }
        while true {
            guard position < range.upperBound, bytes[position] == UInt8(ascii: "\"") else {
                throw Failure(offset: position, reason: "expected a key")
            }
            let keyEnd = try stringEnd(bytes, position, range.upperBound)
            let key = position..<keyEnd
            position = skipSpace(bytes, keyEnd, range.upperBound)
            guard position < range.upperBound, bytes[position] == UInt8(ascii: ":") else {
                throw Failure(offset: position, reason: "expected ':'")
            }
            let valueStart = skipSpace(bytes, position + 1, range.upperBound)
            let valueEnd = try valueEnd(bytes, valueStart, range.upperBound)
            body(key, valueStart..<valueEnd)
            position = skipSpace(bytes, valueEnd, range.upperBound)
            guard position < range.upperBound else { throw Failure(offset: position, reason: "the object does not end") }
            if bytes[position] == UInt8(ascii: "}") { return }
            guard bytes[position] == UInt8(ascii: ",") else { throw Failure(offset: position, reason: "expected ',' or '}'") }
            position = skipSpace(bytes, position + 1, range.upperBound)
        }
    }

    /// The offset just past the value starting at `start`.
    static func valueEnd(_ bytes: UnsafeRawBufferPointer, _ start: Int, _ end: Int) throws(Failure) -> Int {
        guard start < end else { throw Failure(offset: start, reason: "expected a value") }
        switch bytes[start] {
        case UInt8(ascii: "\""):
            return try stringEnd(bytes, start, end)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            var position = start
            while position < end {
                switch bytes[position] {
                case UInt8(ascii: "\""):
                    position = try stringEnd(bytes, position, end)
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { return position + 1 }
                default:
                    break
                }
                position += 1
            }
            throw Failure(offset: start, reason: "the value does not end")
        default:
            var position = start
            while position < end {
                switch bytes[position] {
                case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D:
                    return position
                default:
                    position += 1
                }
            }
            return position
        }
    }

    /// The offset just past the closing quote of the string starting at `start`.
    private static func stringEnd(_ bytes: UnsafeRawBufferPointer, _ start: Int, _ end: Int) throws(Failure) -> Int {
        var position = start + 1
        while position < end {
            switch bytes[position] {
            case UInt8(ascii: "\\"): position += 2
            case UInt8(ascii: "\""): return position + 1
            default: position += 1
            }
        }
        throw Failure(offset: start, reason: "the string does not end")
    }

    private static func skipSpace(_ bytes: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> Int {
        var position = start
        while position < end, bytes[position] == 0x20 || bytes[position] == 0x09 || bytes[position] == 0x0A || bytes[position] == 0x0D {
            position += 1
        }
        return position
    }
}
