import CZlib

/// Whole-file gzip (RFC 1952), for static files compressed once at start-up and served to every
/// client that sends `Accept-Encoding: gzip`.
///
/// Separate from `MessageDeflater` because the needs are opposite: one call per file, the best
/// ratio zlib has (level 9), and a gzip header and trailer instead of raw deflate.
public enum Gzip {
    /// `data` as a gzip member, compressed at `level` (0...9, clamped).
    public static func compress(_ data: [UInt8], level: Int = 9) -> [UInt8] {
        var stream = z_stream()
        // 16 + 15: a 32 KiB window with a gzip wrapper (zlib's deflateInit2 convention).
        let code = CZlib_deflateInit2(&stream, Int32(min(max(level, 0), 9)), Z_DEFLATED, 16 + 15, 9, Z_DEFAULT_STRATEGY)
        // Every argument is valid, so only an allocation failure remains, fatal everywhere else too.
        precondition(code == Z_OK, "deflateInit2 failed with zlib code \(code): out of memory")
        defer { deflateEnd(&stream) }
        // deflateBound covers the gzip wrapper for a stream opened this way, so one call finishes.
        let capacity = Int(deflateBound(&stream, uLong(data.count)))
        return data.withUnsafeBufferPointer { input in
            stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
            stream.avail_in = UInt32(input.count)
            return [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
                stream.next_out = buffer.baseAddress
                stream.avail_out = UInt32(buffer.count)
                let result = deflate(&stream, Z_FINISH)
                precondition(result == Z_STREAM_END, "deflate did not finish within deflateBound (zlib code \(result))")
                count = buffer.count - Int(stream.avail_out)
            }
        }
    }
}
