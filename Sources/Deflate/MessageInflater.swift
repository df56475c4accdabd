import CZlib
import WebSocket

/// Inflates client messages compressed with permessage-deflate (RFC 7692 §7.2.2).
///
/// One per connection when the client uses context takeover (the window carries over from one
/// message to the next); with `noContextTakeover` it is reset after each message, so it holds no
/// state between messages. zlib allocates the window (2^windowBits bytes) on the first message,
/// on top of its 7 KiB state; both are freed in `deinit`.
///
/// Confined to one event loop: the zlib stream changes on every call.
public final class MessageInflater: MessageDecompressor {
    /// The zlib stream, on the heap because zlib keeps a pointer back to it and checks it.
    private let stream: UnsafeMutablePointer<z_stream>
    /// Whether to forget the window after each message (`client_no_context_takeover`).
    private let noContextTakeover: Bool
    /// Whether the message being inflated had a block with BFINAL set (a stream ended in it).
    private var sawFinalBlock = false

    /// The bytes RFC 7692 §7.2.2 has the receiver append: LEN and NLEN of an empty stored
    /// block, which end the sender's sync flush and so complete the message's last block.
    private static let trailer: [UInt8] = [0x00, 0x00, 0xFF, 0xFF]

    /// Output is produced at most this many bytes at a time, so a message never costs more
    /// than `limit` plus this much memory however well it compresses.
    private static let chunkSize = 16 * 1024

    /// `z_stream.data_type` bit set when inflate stopped between two blocks (zlib.h, inflate()).
    private static let atBlockBoundary: Int32 = 128

    /// How feeding one input buffer ended.
    private enum Outcome {
        /// All input consumed, the stream goes on.
        case consumed
        /// The deflate stream ended (a block with BFINAL set); `leftover` input bytes follow it.
        case streamEnd(leftover: Int)
        case tooLarge
        case corrupt
    }

    /// Opens a raw inflate stream.
    ///
    /// - Parameters:
    ///   - windowBits: the agreed `client_max_window_bits`, 8...15. It is raised to at least 9,
    ///     because a larger window reads every stream a smaller one does, and a client whose zlib
    ///     quietly turned 8 into 9 then still works.
    ///   - noContextTakeover: reset the stream after every message.
    public init(windowBits: Int, noContextTakeover: Bool) {
        self.noContextTakeover = noContextTakeover
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let zlibWindowBits = Int32(min(max(windowBits, 9), 15))
        let code = CZlib_inflateInit2(stream, -zlibWindowBits)  // negative: raw deflate, no header
        // The window is clamped to its valid range, so only an allocation failure remains.
        precondition(code == Z_OK, "inflateInit2 failed with zlib code \(code): out of memory")
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Inflates one whole compressed message (all its frames' payloads concatenated).
    ///
    /// Throws `.tooLarge` as soon as the output would pass `limit` bytes (before inflating
    /// further), `.corrupt` on bad data, including a message that does not end on a block
    /// boundary once the trailer is appended. After an error the stream is reset; the
    /// connection is expected to close.
    ///
    /// The message stands alone (`DecompressedMessage.standsAlone`) when the client compresses
    /// without context takeover and the message was one stream of non-final blocks ending on a
    /// sync flush, the form every inflater reads. A message ending in or restarting after a final
    /// block is valid too (§7.2.3.4) but is not passed on as it is.
    public func decompress(_ payload: [UInt8], limit: Int) throws(DecompressionError) -> DecompressedMessage {
        // zlib counts input in 32 bits; and `limit + 1` below must not overflow.
        guard payload.count <= Int(UInt32.max) else { throw .tooLarge }
        let limit = min(max(limit, 0), Int.max - 1)
        sawFinalBlock = false
        var output: [UInt8] = []
        output.reserveCapacity(min(limit, max(payload.count * 4, 256)))
        let outcome = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.chunkSize) { chunk in
            inflateMessage(payload, limit: limit, chunk: chunk, into: &output)
        }
        switch outcome {
        case .consumed, .streamEnd:
            if noContextTakeover { inflateReset(stream) }
            return DecompressedMessage(payload: output, standsAlone: noContextTakeover && !sawFinalBlock)
        case .tooLarge:
            inflateReset(stream)
            throw .tooLarge
        case .corrupt:
            inflateReset(stream)
            throw .corrupt
        }
    }

    /// Feeds the payload then the trailer, and checks the message ended between two blocks.
    private func inflateMessage(
        _ payload: [UInt8],
        limit: Int,
        chunk: UnsafeMutableBufferPointer<UInt8>,
        into output: inout [UInt8]
    ) -> Outcome {
        let payloadOutcome = payload.withUnsafeBytes { feedAll($0, limit: limit, chunk: chunk, into: &output) }
        // `.streamEnd` here is a payload ending exactly with a final block: the message is
        // complete, and the trailer would only open a stream it cannot finish.
        guard case .consumed = payloadOutcome else { return payloadOutcome }
        let trailerOutcome = Self.trailer.withUnsafeBytes { feedAll($0, limit: limit, chunk: chunk, into: &output) }
        switch trailerOutcome {
        case .consumed:
            // A well-formed message ends with a sync flush, so the trailer closes an empty stored
            // block and inflate waits for the next block header; anywhere else means truncation.
            return stream.pointee.data_type & Self.atBlockBoundary != 0 ? .consumed : .corrupt
        case .streamEnd, .tooLarge, .corrupt:
            return trailerOutcome
        }
    }

    /// Inflates all of `input`, starting a new stream after each block with BFINAL set.
    ///
    /// RFC 7692 §7.2.3.4 lets a sender end a message with a final block followed by a `00` byte,
    /// which with the trailer forms an empty stored block: the bytes after a stream's end are
    /// inflated as a new stream (after a final block the sender's compressor had to restart
    /// too, so no window is lost). `.streamEnd(0)` reports a stream that ended with the input.
    private func feedAll(
        _ input: UnsafeRawBufferPointer,
        limit: Int,
        chunk: UnsafeMutableBufferPointer<UInt8>,
        into output: inout [UInt8]
    ) -> Outcome {
        var remaining = input
        while true {
            let outcome = feed(remaining, limit: limit, chunk: chunk, into: &output)
            guard case .streamEnd(let leftover) = outcome else { return outcome }
            sawFinalBlock = true
            inflateReset(stream)
            if leftover == 0 { return outcome }
            remaining = UnsafeRawBufferPointer(rebasing: remaining.suffix(leftover))
        }
    }

    /// Inflates all of `input`, appending at most `limit + 1 - output.count` bytes to `output`.
    ///
    /// Asking zlib for one byte more than the limit allows is how "passes the limit" is
    /// detected without ever inflating further than that.
    private func feed(
        _ input: UnsafeRawBufferPointer,
        limit: Int,
        chunk: UnsafeMutableBufferPointer<UInt8>,
        into output: inout [UInt8]
    ) -> Outcome {
        stream.pointee.next_in = input.baseAddress.map {
            UnsafeMutablePointer(mutating: $0.assumingMemoryBound(to: Bytef.self))
        }
        stream.pointee.avail_in = UInt32(input.count)
        defer {
            stream.pointee.next_in = nil
            stream.pointee.next_out = nil
        }
        while true {
            let room = min(chunk.count, limit - output.count + 1)
            stream.pointee.next_out = chunk.baseAddress
            stream.pointee.avail_out = UInt32(room)
            let code = inflate(stream, Z_SYNC_FLUSH)
            let produced = room - Int(stream.pointee.avail_out)
            if output.count + produced > limit { return .tooLarge }
            output.append(contentsOf: chunk[0..<produced])
            switch code {
            case Z_STREAM_END:
                return .streamEnd(leftover: Int(stream.pointee.avail_in))
            case Z_OK, Z_BUF_ERROR:
                // Z_BUF_ERROR is "no progress possible": with room left, that means input ran out.
                if stream.pointee.avail_out > 0 && stream.pointee.avail_in == 0 { return .consumed }
                if code == Z_BUF_ERROR && stream.pointee.avail_out > 0 { return .corrupt }
            default:
                // Z_DATA_ERROR (invalid data), Z_NEED_DICT (impossible in raw mode), Z_MEM_ERROR.
                return .corrupt
            }
        }
    }
}
