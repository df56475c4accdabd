import Glibc
import JSON

/// A journal line that sets one whole message, found in its bytes without parsing it: what a
/// checkpoint replays most (`Checkpoint.applyWholeMessage`).
///
/// The store writes such a line as `{"op":"set","path":["Messages","<gid>","<mid>"],"value":{...}}`,
/// keys in that order and the value serialized as the record a segment keeps, so the value's
/// bytes are the record's. Only that exact shape is recognised, with ids that need no escapes;
/// anything else (another order, an escape, a value that is not an object) returns nil and goes
/// the way of every other line, through `JSONValue.parse` and `Mutation`. Used for the journals
/// this process wrote (a checkpoint's), never for the start's replay, which checks every line.
///
/// Its parts are ranges of the line's bytes, nothing the line's parse has to allocate or free:
/// the group as a `String` in the result cost some 400 instructions a line just to destroy it
/// (through the runtime's generic value witnesses of the optional result).
struct MessageLine {
    /// The group id's bytes, between its quotes.
    let group: Range<Int>
    /// The message id's bytes, between its quotes.
    let id: Range<Int>
    /// The value's bytes.
    let value: Range<Int>

    /// The parts of `line`, or nil when it is not a whole message's line.
    static func parse(_ line: UnsafeRawBufferPointer) -> MessageLine? {
        guard line.count > prefix.count + valueKey.count + 6, matches(line, at: 0, prefix) else { return nil }
        guard let groupEnd = plainStringEnd(line, from: prefix.count), line.count > groupEnd + 3,
              line[groupEnd + 1] == UInt8(ascii: ","), line[groupEnd + 2] == UInt8(ascii: "\""),
              let idEnd = plainStringEnd(line, from: groupEnd + 3),
              matches(line, at: idEnd + 1, valueKey)
        else { return nil }
        let valueStart = idEnd + 1 + valueKey.count
        let valueEnd = line.count - 1
        guard valueStart < valueEnd, line[valueStart] == UInt8(ascii: "{"), line[valueEnd] == UInt8(ascii: "}"),
              line[valueEnd - 1] == UInt8(ascii: "}")
        else { return nil }
        return MessageLine(group: prefix.count..<groupEnd, id: groupEnd + 3..<idEnd, value: valueStart..<valueEnd)
    }

    /// The offset of the quote that ends the string starting at `start`, when the string is
    /// not empty and holds no escape and no control character.
    private static func plainStringEnd(_ line: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard start < line.count, let base = line.baseAddress,
              let quote = memchr(base + start, Int32(UInt8(ascii: "\"")), line.count - start)
        else { return nil }
        let end = base.distance(to: UnsafeRawPointer(quote))
        let bytes = UnsafeRawBufferPointer(rebasing: line[start..<end])
        guard end > start, JSONEncoding.isPlain(bytes.assumingMemoryBound(to: UInt8.self)) else { return nil }
        return end
    }

    /// Whether `line` holds `bytes` at `offset` (`starts(with:)` compared byte by byte through
    /// generic code, a fifth of this parse's time).
    private static func matches(_ line: UnsafeRawBufferPointer, at offset: Int, _ bytes: [UInt8]) -> Bool {
        guard offset + bytes.count <= line.count, let base = line.baseAddress else { return false }
        return bytes.withUnsafeBytes { memcmp(base + offset, $0.baseAddress!, $0.count) == 0 }
    }

    private static let prefix = Array(#"{"op":"set","path":["Messages",""#.utf8)
    private static let valueKey = Array(#"],"value":"#.utf8)
}
