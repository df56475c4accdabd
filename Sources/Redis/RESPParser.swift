/// An incremental RESP2 reader: bytes in as they arrive, whole values out.
///
/// A pure state machine in the manner of the WebSocket frame decoder: `receive` takes any
/// split of the stream (one byte at a time included) and appends each value completed so
/// far; bytes of an unfinished value wait in `pending`. An unfinished value is parsed again
/// from its start when more bytes come, which costs little since a bulk string's length is
/// read first and its bytes are only checked for being there. What is not RESP (a bad type
/// byte, a length that is no number or out of range, nesting past `maxDepth`) throws: the
/// stream cannot be resynchronised, so the connection is dropped.
public struct RESPParser {
    public struct Limits: Sendable {
        public var maxBulkBytes = 512 << 20
        public var maxArrayCount = 1 << 24
        public var maxDepth = 16

        public init() {}
    }

    public struct Malformed: Error, Equatable, CustomStringConvertible {
        public let description: String
    }

    private let limits: Limits
    private var pending: [UInt8] = []
    /// Where the unfinished value starts in `pending`; bytes before it are consumed.
    private var start = 0

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Bytes received and not yet part of a whole value.
    public var bufferedBytes: Int { pending.count - start }

    /// Appends every value `bytes` completes to `values`.
    public mutating func receive(_ bytes: UnsafeRawBufferPointer, into values: inout [RESPValue]) throws(Malformed) {
        pending.append(contentsOf: bytes)
        while start < pending.count {
            var cursor = start
            guard let value = try parse(at: &cursor, depth: 0) else { break }
            values.append(value)
            start = cursor
        }
        if start == pending.count {
            pending.removeAll(keepingCapacity: pending.capacity <= 64 * 1024)
            start = 0
        } else if start > 64 * 1024 && start * 2 > pending.count {
            pending.removeFirst(start)
            start = 0
        }
    }

    public mutating func receive(_ bytes: [UInt8], into values: inout [RESPValue]) throws(Malformed) {
        var failure: Malformed?
        bytes.withUnsafeBytes { raw in
            do throws(Malformed) {
                try receive(raw, into: &values)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }

    /// Parses one value at `cursor`, moving it past the value; nil when the value is not
    /// complete yet (the cursor is then meaningless).
    private func parse(at cursor: inout Int, depth: Int) throws(Malformed) -> RESPValue? {
        guard depth <= limits.maxDepth else { throw Malformed(description: "RESP nesting deeper than \(limits.maxDepth)") }
        guard cursor < pending.count else { return nil }
        let type = pending[cursor]
        cursor += 1
        guard let line = self.line(at: &cursor) else { return nil }
        switch type {
        case UInt8(ascii: "+"):
            return .simple(String(decoding: line, as: UTF8.self))
        case UInt8(ascii: "-"):
            return .error(String(decoding: line, as: UTF8.self))
        case UInt8(ascii: ":"):
            return .integer(try number(line, "integer"))
        case UInt8(ascii: "$"):
            let length = try number(line, "bulk string length")
            if length == -1 { return .bulk(nil) }
            guard (0...limits.maxBulkBytes).contains(length) else {
                throw Malformed(description: "RESP bulk string length \(length) out of range")
            }
            guard pending.count - cursor >= length + 2 else { return nil }
            let bytes = Array(pending[cursor..<cursor + length])
            guard pending[cursor + length] == 13, pending[cursor + length + 1] == 10 else {
                throw Malformed(description: "RESP bulk string not followed by CRLF")
            }
            cursor += length + 2
            return .bulk(bytes)
        case UInt8(ascii: "*"):
            let count = try number(line, "array length")
            if count == -1 { return .array(nil) }
            guard (0...limits.maxArrayCount).contains(count) else {
                throw Malformed(description: "RESP array length \(count) out of range")
            }
            var elements: [RESPValue] = []
            elements.reserveCapacity(min(count, 1024))
            for _ in 0..<count {
                guard let element = try parse(at: &cursor, depth: depth + 1) else { return nil }
                elements.append(element)
            }
            return .array(elements)
        default:
            throw Malformed(description: "RESP type byte \(type) is not one of + - : $ *")
        }
    }

    /// The bytes up to the next CRLF, with the cursor moved past it; nil when no CRLF came yet.
    private func line(at cursor: inout Int) -> ArraySlice<UInt8>? {
        var index = cursor
        while index + 1 < pending.count {
            if pending[index] == 13 && pending[index + 1] == 10 {
                let line = pending[cursor..<index]
                cursor = index + 2
                return line
            }
            index += 1
        }
        return nil
    }

    private func number(_ line: ArraySlice<UInt8>, _ what: String) throws(Malformed) -> Int {
        guard let value = Int(String(decoding: line, as: UTF8.self)) else {
            throw Malformed(description: "RESP \(what) is not a number")
        }
        return value
    }
}
