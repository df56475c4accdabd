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
    /// A message in progress: its input, how far inflate has read it, and the output so far.
    private struct Inflation {
        var payload: [UInt8]
        var limit: Int
        /// Whether the payload is read and the trailer is being fed.
        var inTrailer = false
        /// Bytes of the current input (payload or trailer) inflate has consumed.
        var offset = 0
        var output: [UInt8]
        /// Whether the message had a block with BFINAL set (a stream ended in it).
        var sawFinalBlock = false
    }

    /// A message left unfinished, and the zlib stream it goes on in: a copy of its own when the
    /// inflater keeps no context (it may be shared by other connections meanwhile), the
    /// inflater's stream otherwise (the connection's alone).
    private final class Paused: PendingInflation {
        var inflation: Inflation
        let stream: UnsafeMutablePointer<z_stream>
        let ownsStream: Bool

        init(_ inflation: Inflation, stream: UnsafeMutablePointer<z_stream>, ownsStream: Bool) {
            self.inflation = inflation
            self.stream = stream
            self.ownsStream = ownsStream
        }

        deinit {
            guard ownsStream else { return }
            inflateEnd(stream)
            stream.deinitialize(count: 1)
            stream.deallocate()
        }
    }

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
        /// The output reached the step's budget; input or pending output remains.
        case paused
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

    /// The message stands alone (`DecompressedMessage.standsAlone`) when the client compresses
    /// without context takeover and the message was one stream of non-final blocks ending on a
    /// sync flush, the form every inflater reads. A message ending in or restarting after a final
    /// block is valid too (§7.2.3.4) but is not passed on as it is.
    public func decompress(_ payload: [UInt8], limit: Int, budget: Int) throws(DecompressionError) -> DecompressionStep {
        // zlib counts input in 32 bits; and `limit + 1` below must not overflow.
        guard payload.count <= Int(UInt32.max) else { throw .tooLarge }
        let limit = min(max(limit, 0), Int.max - 1)
        var output: [UInt8] = []
        output.reserveCapacity(min(limit, max(payload.count * 4, 256)))
        var inflation = Inflation(payload: payload, limit: limit, output: output)
        return try run(&inflation, in: stream, paused: nil, budget: budget)
    }

    public func resume(_ pending: any PendingInflation, budget: Int) throws(DecompressionError) -> DecompressionStep {
        guard let paused = pending as? Paused else { throw .corrupt }
        var inflation = paused.inflation
        // Taken out while it grows: with a second reference, every step would copy the output.
        paused.inflation.output = []
        return try run(&inflation, in: paused.stream, paused: paused, budget: budget)
    }

    /// One step of a message in `stream`: the message if it completes, or where it paused.
    private func run(
        _ current: inout Inflation,
        in stream: UnsafeMutablePointer<z_stream>,
        paused: Paused?,
        budget: Int
    ) throws(DecompressionError) -> DecompressionStep {
        let stop = current.output.count + min(max(budget, 1), current.limit + 1 - current.output.count)
        let outcome = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.chunkSize) { chunk in
            step(&current, in: stream, until: stop, chunk: chunk)
        }
        switch outcome {
        case .paused:
            if let paused {
                paused.inflation = current
                return .pending(paused)
            }
            return .pending(pause(current))
        case .consumed, .streamEnd:
            if noContextTakeover { inflateReset(stream) }
            let standsAlone = noContextTakeover && !current.sawFinalBlock
            return .done(DecompressedMessage(payload: current.output, standsAlone: standsAlone))
        case .tooLarge:
            inflateReset(stream)
            throw .tooLarge
        case .corrupt:
            inflateReset(stream)
            throw .corrupt
        }
    }

    /// Sets a message aside. Without context takeover the stream is copied for it and reset,
    /// free for the next message of any connection sharing this inflater.
    private func pause(_ inflation: Inflation) -> Paused {
        guard noContextTakeover else { return Paused(inflation, stream: stream, ownsStream: false) }
        let copy = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        copy.initialize(to: z_stream())
        let code = inflateCopy(copy, stream)
        precondition(code == Z_OK, "inflateCopy failed with zlib code \(code): out of memory")
        inflateReset(stream)
        return Paused(inflation, stream: copy, ownsStream: true)
    }

    /// Feeds the payload then the trailer until the message is complete or the output reaches
    /// `stop`, and checks the message ended between two blocks.
    ///
    /// RFC 7692 §7.2.3.4 lets a sender end a message with a final block followed by a `00` byte,
    /// which with the trailer forms an empty stored block: the bytes after a stream's end are
    /// inflated as a new stream (after a final block the sender's compressor had to restart
    /// too, so no window is lost).
    private func step(
        _ current: inout Inflation,
        in stream: UnsafeMutablePointer<z_stream>,
        until stop: Int,
        chunk: UnsafeMutableBufferPointer<UInt8>
    ) -> Outcome {
        while true {
            let input = current.inTrailer ? Self.trailer : current.payload
            let outcome = input.withUnsafeBytes { bytes in
                feed(UnsafeRawBufferPointer(rebasing: bytes[current.offset...]), into: stream, limit: current.limit,
                     until: stop, chunk: chunk, output: &current.output)
            }
            current.offset = input.count - Int(stream.pointee.avail_in)
            switch outcome {
            case .paused, .tooLarge, .corrupt:
                return outcome
            case .streamEnd(let leftover):
                current.sawFinalBlock = true
                inflateReset(stream)
                // A payload ending exactly with a final block is complete: the trailer would
                // only open a stream it cannot finish.
                if leftover == 0 { return outcome }
            case .consumed where !current.inTrailer:
                current.inTrailer = true
                current.offset = 0
            case .consumed:
                // A well-formed message ends with a sync flush, so the trailer closes an empty stored
                // block and inflate waits for the next block header; anywhere else means truncation.
                return stream.pointee.data_type & Self.atBlockBoundary != 0 ? .consumed : .corrupt
            }
        }
    }

    /// Inflates `input`, appending at most `limit + 1 - output.count` bytes to `output`, until
    /// the input is used up, the stream ends, or the output reaches `stop` (`.paused`).
    ///
    /// Asking zlib for one byte more than the limit allows is how "passes the limit" is
    /// detected without ever inflating further than that.
    private func feed(
        _ input: UnsafeRawBufferPointer,
        into stream: UnsafeMutablePointer<z_stream>,
        limit: Int,
        until stop: Int,
        chunk: UnsafeMutableBufferPointer<UInt8>,
        output: inout [UInt8]
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
                if output.count >= stop { return .paused }
            default:
                // Z_DATA_ERROR (invalid data), Z_NEED_DICT (impossible in raw mode), Z_MEM_ERROR.
                return .corrupt
            }
        }
    }
}
