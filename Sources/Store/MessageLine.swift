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
enum MessageLine {
    /// The group, the message id and the range of the value's bytes, or nil.
    static func parse(_ line: UnsafeRawBufferPointer) -> (group: String, id: String, value: Range<Int>)? {
        guard line.count > prefix.count + valueKey.count + 6, matches(line, at: 0, prefix) else { return nil }
        guard let (group, afterGroup) = plainString(line, from: prefix.count), line.count > afterGroup + 2,
              line[afterGroup] == UInt8(ascii: ","), line[afterGroup + 1] == UInt8(ascii: "\""),
              let (id, afterID) = plainString(line, from: afterGroup + 2),
              matches(line, at: afterID, valueKey)
        else { return nil }
        let valueStart = afterID + valueKey.count
        let valueEnd = line.count - 1
        guard valueStart < valueEnd, line[valueStart] == UInt8(ascii: "{"), line[valueEnd] == UInt8(ascii: "}"),
              line[valueEnd - 1] == UInt8(ascii: "}")
        else { return nil }
        return (group, id, valueStart..<valueEnd)
    }

    /// The string from `start` to the next quote, when it holds no escape and no control
    /// character, and the offset just past that quote.
    private static func plainString(_ line: UnsafeRawBufferPointer, from start: Int) -> (String, Int)? {
        guard start < line.count, let base = line.baseAddress,
              let quote = memchr(base + start, Int32(UInt8(ascii: "\"")), line.count - start)
        else { return nil }
        let end = base.distance(to: UnsafeRawPointer(quote))
        let bytes = UnsafeRawBufferPointer(rebasing: line[start..<end])
        guard end > start, JSONEncoding.isPlain(bytes.assumingMemoryBound(to: UInt8.self)) else { return nil }
        return (String(decoding: bytes, as: UTF8.self), end + 1)
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
