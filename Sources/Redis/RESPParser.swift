/// An incremental RESP2 reader: bytes in as they arrive, whole values out.
///
/// A pure state machine in the manner of the WebSocket frame decoder: `receive` takes any
/// split of the stream (one byte at a time included) and appends each value completed so
/// far; bytes of an unfinished value wait in `pending`. A value is checked whole before any of
/// it is built, so an unfinished one is only checked again from its start when more bytes
/// come, which costs little since a bulk string's length is read first and its bytes are only
/// checked for being there; nothing of it is copied until it is whole. What is not RESP (a
/// bad type byte, a length that is no number or out of range, nesting past `maxDepth`) throws:
/// the stream cannot be resynchronised, so the connection is dropped.
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
    ///
    /// With nothing pending, values are read from `bytes` where they lie and only an
    /// unfinished value's bytes are kept: a cluster node's journal entries, read back, went
    /// through `pending` in a copy of every change (BENCHMARKS.md, "A cluster node's
    /// instructions").
    public mutating func receive(_ bytes: UnsafeRawBufferPointer, into values: inout [RESPValue]) throws(Malformed) {
        guard pending.isEmpty else {
            pending.append(contentsOf: bytes)
            try parsePending(into: &values)
            return
        }
        let used = try parseValues(in: bytes, from: 0, into: &values)
        if used < bytes.count { pending.append(contentsOf: bytes[used...]) }
    }

    private mutating func parsePending(into values: inout [RESPValue]) throws(Malformed) {
        var result: Result<Int, Malformed> = .success(start)
        pending.withUnsafeBytes { buffer in
            result = Result { () throws(Malformed) in try parseValues(in: buffer, from: start, into: &values) }
        }
        start = try result.get()
        if start == pending.count {
            pending.removeAll(keepingCapacity: pending.capacity <= 64 * 1024)
            start = 0
        } else if start > 64 * 1024 && start * 2 > pending.count {
            pending.removeFirst(start)
            start = 0
        }
    }

    /// Appends the whole values of `buffer` from `offset` on; returns where the first
    /// unfinished one starts (or the end).
    private func parseValues(in buffer: UnsafeRawBufferPointer, from offset: Int, into values: inout [RESPValue]) throws(Malformed) -> Int {
        var start = offset
        while start < buffer.count {
            var end = start
            guard try skip(buffer, at: &end, depth: 0) else { break }
            values.append(value(buffer, at: &start))
        }
        return start
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

    /// Checks the value at `cursor` and moves the cursor past it; false when the value is not
    /// complete yet (the cursor is then meaningless). Builds nothing: an unfinished array is
    /// checked again when more bytes come, and only its headers are read again.
    private func skip(_ buffer: UnsafeRawBufferPointer, at cursor: inout Int, depth: Int) throws(Malformed) -> Bool {
        guard depth <= limits.maxDepth else { throw Malformed(description: "RESP nesting deeper than \(limits.maxDepth)") }
        guard cursor < buffer.count else { return false }
        let type = buffer[cursor]
        cursor += 1
        guard let line = Self.line(buffer, at: &cursor) else { return false }
        switch type {
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            return true
        case UInt8(ascii: ":"):
            _ = try Self.number(buffer, line, "integer")
            return true
        case UInt8(ascii: "$"):
            let length = try Self.number(buffer, line, "bulk string length")
            if length == -1 { return true }
            guard (0...limits.maxBulkBytes).contains(length) else {
                throw Malformed(description: "RESP bulk string length \(length) out of range")
            }
            guard buffer.count - cursor >= length + 2 else { return false }
            guard buffer[cursor + length] == 13, buffer[cursor + length + 1] == 10 else {
                throw Malformed(description: "RESP bulk string not followed by CRLF")
            }
            cursor += length + 2
            return true
        case UInt8(ascii: "*"):
            let count = try Self.number(buffer, line, "array length")
            if count == -1 { return true }
            guard (0...limits.maxArrayCount).contains(count) else {
                throw Malformed(description: "RESP array length \(count) out of range")
            }
            for _ in 0..<count {
                guard try skip(buffer, at: &cursor, depth: depth + 1) else { return false }
            }
            return true
        default:
            throw Malformed(description: "RESP type byte \(type) is not one of + - : $ *")
        }
    }

    /// The value at `cursor`, which `skip` found whole, with the cursor moved past it. Its
    /// headers are read a second time here, a few bytes each, where building a value as it was
    /// checked copied the bulk strings of every unfinished array again at each read.
    private func value(_ buffer: UnsafeRawBufferPointer, at cursor: inout Int) -> RESPValue {
        let type = buffer[cursor]
        cursor += 1
        let line = Self.line(buffer, at: &cursor)!
        let text = UnsafeRawBufferPointer(rebasing: buffer[line])
        switch type {
        case UInt8(ascii: "+"):
            return .simple(String(decoding: text, as: UTF8.self))
        case UInt8(ascii: "-"):
            return .error(String(decoding: text, as: UTF8.self))
        case UInt8(ascii: ":"):
            return .integer(try! Self.number(buffer, line, "integer"))
        case UInt8(ascii: "$"):
            let length = try! Self.number(buffer, line, "bulk string length")
            if length == -1 { return .bulk(nil) }
            let bytes = Array(buffer[cursor..<cursor + length])
            cursor += length + 2
            return .bulk(bytes)
        default:
            let count = try! Self.number(buffer, line, "array length")
            if count == -1 { return .array(nil) }
            var elements: [RESPValue] = []
            elements.reserveCapacity(count)
            for _ in 0..<count { elements.append(value(buffer, at: &cursor)) }
            return .array(elements)
        }
    }

    /// Where the bytes up to the next CRLF lie, with the cursor moved past it; nil when no CRLF
    /// came yet.
    private static func line(_ buffer: UnsafeRawBufferPointer, at cursor: inout Int) -> Range<Int>? {
        var index = cursor
        while index + 1 < buffer.count {
            if buffer[index] == 13 && buffer[index + 1] == 10 {
                let line = cursor..<index
                cursor = index + 2
                return line
            }
            index += 1
        }
        return nil
    }

    /// A signed decimal (`[+|-]digits`, as the protocol writes integers and lengths), read
    /// from the bytes: making a string of each header to parse it was two allocations per
    /// journal entry's field.
    private static func number(_ buffer: UnsafeRawBufferPointer, _ line: Range<Int>, _ what: String) throws(Malformed) -> Int {
        var index = line.lowerBound
        let negative = index < line.upperBound && buffer[index] == UInt8(ascii: "-")
        if index < line.upperBound && (negative || buffer[index] == UInt8(ascii: "+")) { index += 1 }
        guard index < line.upperBound else { throw Malformed(description: "RESP \(what) is not a number") }
        var value = 0
        while index < line.upperBound {
            let digit = buffer[index] &- UInt8(ascii: "0")
            let (shifted, overflowed) = value.multipliedReportingOverflow(by: 10)
            let (next, overflowedToo) = negative
                ? shifted.subtractingReportingOverflow(Int(digit)) : shifted.addingReportingOverflow(Int(digit))
            guard digit < 10, !overflowed, !overflowedToo else { throw Malformed(description: "RESP \(what) is not a number") }
            value = next
            index += 1
        }
        return value
    }
}
