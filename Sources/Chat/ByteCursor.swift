import Bytes
import JSON

/// Writes bytes one after another into memory sized beforehand, or only counts them.
///
/// For replies and journal lines written on every `send`: the same writing code runs twice,
/// first with a counting cursor to size the memory, then with one that writes. The whole costs
/// one allocation or one append, where appending piece by piece checked the array's uniqueness
/// and capacity at every piece (some 70 instructions a call; BENCHMARKS.md).
struct ByteCursor {
    /// Where the bytes go; nil for a cursor that only counts.
    private let base: UnsafeMutableRawPointer?
    /// Bytes written (or counted) so far.
    private(set) var count = 0

    /// A cursor that counts.
    init() {
        base = nil
    }

    /// A cursor that writes into `buffer`, which must hold what it is given.
    init(writingInto buffer: UnsafeMutableRawBufferPointer) {
        base = buffer.baseAddress
    }

    @inline(__always)
    mutating func write(_ bytes: UnsafeRawBufferPointer) {
        if let base, !bytes.isEmpty {
            (base + count).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        }
        count += bytes.count
    }

    @inline(__always)
    mutating func write(_ text: StaticString) {
        write(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// `"value"`, which must need no escaping (`JSONEncoding.isPlain`); returns where it lies,
    /// quotes included.
    mutating func writeQuoted(_ value: String) -> Range<Int> {
        let start = count
        write("\"")
        if value.utf8.withContiguousStorageIfAvailable({ write(UnsafeRawBufferPointer($0)) }) == nil {
            var value = value
            value.withUTF8 { write(UnsafeRawBufferPointer($0)) }
        }
        write("\"")
        return start..<count
    }

    /// `key` (fixed text, such as `,"text":`), then `value` as `writeQuoted` writes it; returns
    /// where the value lies.
    mutating func writeQuoted(_ value: String, after key: StaticString) -> Range<Int> {
        write(key)
        return writeQuoted(value)
    }

    /// The decimal digits of `value`; returns where they lie.
    mutating func writeInteger(_ value: Int64) -> Range<Int> {
        let start = count
        let length = ASCII.decimalCount(value)
        if let base { ASCII.writeDecimal(value, count: length, at: base + count) }
        count += length
        return start..<count
    }

    /// The bytes that `body` writes, as a new array, from a cursor that counted them: the
    /// caller runs its writing code once on a counting cursor (keeping what it returns, such
    /// as where a value lies), then here again to write.
    ///
    /// The array starts as a copy of zeros, written over: the array's own ways to allocate
    /// memory to write into (`init(unsafeUninitializedCapacity:)`, `init(repeating:count:)`)
    /// go through an unspecialized path that looks up the storage class's generic metadata on
    /// every call (some 540 instructions), where a copy of raw bytes takes the standard
    /// library's path compiled for bytes (about 130, and a `memcpy`).
    func bytes(_ body: (inout ByteCursor) -> Void) -> [UInt8] {
        var bytes = count <= Self.zeros.count ? Array(UnsafeRawBufferPointer(rebasing: Self.zeros[..<count]))
            : [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBytes { buffer in
            var cursor = ByteCursor(writingInto: buffer)
            body(&cursor)
            assert(cursor.count == buffer.count, "the writing pass writes what the counting pass counted")
        }
        return bytes
    }

    /// Zeros for `bytes` to copy: more than any reply or event but the largest. Never written
    /// after it is made, so any thread may read it.
    nonisolated(unsafe) private static let zeros = UnsafeRawBufferPointer(
        UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 16).initializeMemory(as: UInt8.self, repeating: 0))

    /// Appends the bytes that `body` writes to `out`, from a cursor that counted them (as `bytes`).
    func append(to out: inout [UInt8], _ body: (inout ByteCursor) -> Void) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count) { buffer in
            var cursor = ByteCursor(writingInto: UnsafeMutableRawBufferPointer(buffer))
            body(&cursor)
            out.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[..<cursor.count]))
        }
    }
}
