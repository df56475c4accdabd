import CZlib

/// Compresses server messages into permessage-deflate payloads (RFC 7692 §7.2.1).
///
/// The result is the payload of a frame with RSV1 set: raw deflate data flushed with
/// `Z_SYNC_FLUSH`, the final `00 00 ff ff` removed. With `noContextTakeover` the stream is reset
/// after every message, so one deflater per event loop can compress for every connection (and a
/// frame compressed once can be queued on every member of a room). With context takeover, each
/// connection needs its own deflater, and messages must be compressed in the order they are sent.
///
/// Confined to one event loop: the zlib stream changes on every call. The zlib state (about
/// 2^(windowBits+2) + 2^(memoryLevel+9) bytes plus 6 KiB) is freed in `deinit`.
public final class MessageDeflater {
    /// The zlib stream, on the heap because zlib keeps a pointer back to it and checks it.
    private let stream: UnsafeMutablePointer<z_stream>
    /// Whether to forget the window after each message (`server_no_context_takeover`).
    private let noContextTakeover: Bool

    /// Bytes added to `deflateBound`, which assumes `Z_FINISH`: the sync flush's empty stored
    /// block costs up to 3 header bits, 7 padding bits and 4 length bytes.
    private static let flushMargin = 8

    /// The tail every `Z_SYNC_FLUSH` leaves: the LEN and NLEN of an empty stored block.
    private static let syncTrailer: [UInt8] = [0x00, 0x00, 0xFF, 0xFF]

    /// Opens a raw deflate stream.
    ///
    /// - Parameters:
    ///   - windowBits: the agreed `server_max_window_bits`, 8...15 (clamped). zlib refuses an
    ///     8-bit raw window, so 8 runs as 9: zlib never matches farther back than the window
    ///     minus 262 bytes, 250 bytes at 9 bits, so its output stays valid for a 256-byte window.
    ///   - noContextTakeover: reset the stream after every message.
    ///   - memoryLevel: zlib `memLevel`, 1...9 (clamped).
    ///   - level: zlib compression level, 0...9 (clamped).
    public init(windowBits: Int, noContextTakeover: Bool, memoryLevel: Int, level: Int) {
        self.noContextTakeover = noContextTakeover
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let zlibWindowBits = Int32(min(max(windowBits, 9), 15))
        let code = CZlib_deflateInit2(
            stream,
            Int32(min(max(level, 0), 9)),
            Z_DEFLATED,
            -zlibWindowBits,  // negative: raw deflate, no zlib header or checksum (RFC 7692 §7.2.1)
            Int32(min(max(memoryLevel, 1), 9)),
            Z_DEFAULT_STRATEGY
        )
        // Every argument is clamped to its valid range, so only an allocation failure remains,
        // which Swift treats as fatal everywhere else too.
        precondition(code == Z_OK, "deflateInit2 failed with zlib code \(code): out of memory")
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Compresses one whole message into the payload of a frame with RSV1 set.
    ///
    /// An empty message becomes the single byte `00` (an empty stored block without its length
    /// bytes), which every inflater reads as empty without touching the window.
    public func compress(_ message: UnsafeRawBufferPointer) -> [UInt8] {
        guard let base = message.baseAddress, !message.isEmpty else { return [0x00] }
        precondition(message.count <= Int(UInt32.max), "a message larger than 4 GiB cannot be compressed in one call")
        stream.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = UInt32(message.count)

        let capacity = Int(deflateBound(stream, uLong(message.count))) + Self.flushMargin
        var output = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
            count = deflateSome(into: buffer)
        }
        // deflateBound is a promise zlib keeps, but a full buffer would mean output is still
        // pending, so drain it rather than truncate the message.
        while stream.pointee.avail_out == 0 {
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 1024) { chunk in
                let produced = deflateSome(into: chunk)
                output.append(contentsOf: chunk[0..<produced])
            }
        }
        stream.pointee.next_in = nil
        stream.pointee.next_out = nil

        if output.count >= 4, output[(output.count - 4)...].elementsEqual(Self.syncTrailer) {
            output.removeLast(4)
        } else {
            assertionFailure("Z_SYNC_FLUSH output must end with 00 00 ff ff")
        }
        if noContextTakeover { deflateReset(stream) }
        return output
    }

    /// Compresses one whole message held in an array.
    public func compress(_ message: [UInt8]) -> [UInt8] {
        message.withUnsafeBytes { compress($0) }
    }

    /// Runs one `deflate(Z_SYNC_FLUSH)` into `buffer` and returns how many bytes it wrote.
    private func deflateSome(into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        stream.pointee.next_out = buffer.baseAddress
        stream.pointee.avail_out = UInt32(buffer.count)
        let code = deflate(stream, Z_SYNC_FLUSH)
        // Z_BUF_ERROR only means "no progress possible", which the caller's loop never reaches;
        // anything else would be a damaged stream, a bug of ours rather than of a peer.
        assert(code == Z_OK || code == Z_BUF_ERROR, "deflate failed with zlib code \(code)")
        return buffer.count - Int(stream.pointee.avail_out)
    }
}
