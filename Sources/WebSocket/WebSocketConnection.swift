import Bytes

/// The server side of one WebSocket connection: frame parsing, reassembly, validation and the
/// closing handshake (RFC 6455 §5-§7), with no socket in sight.
///
/// Bytes read from the socket go in through `receive(_:into:inflationBudget:)` (or
/// `receive(_:into:)`, which inflates without a bound); messages, bytes to write and the
/// instruction to close come out as `WebSocketEvent`s. A value type confined to the
/// connection's event loop. Not `Sendable`: it holds the connection's decompressor, a class
/// with zlib state that must stay on that loop too.
///
/// Input is never re-buffered beyond a split header: payload bytes go straight from the read
/// buffer into the message, unmasked on the way.
public struct WebSocketConnection {
    /// Where the parser stands in the byte stream.
    enum ReadState {
        /// Expecting (the rest of) a frame header.
        case header
        /// Reading the payload of `frame`; entered even for empty payloads so that finishing a
        /// frame happens in one place.
        case payload
    }

    /// A compressed message whose inflation is under way.
    struct Inflating {
        var opcode: Opcode
        /// The compressed payload, passed on with the message when it stands alone.
        var payload: [UInt8]
        /// Where the decompressor left it, nil before the first step.
        var pending: (any PendingInflation)?
    }

    /// The frame whose payload is being read, already validated.
    struct FrameInProgress {
        var opcode: Opcode
        var fin: Bool
        var maskingKey: MaskingKey
        /// Payload bytes still to come.
        var remaining: Int
        /// Payload bytes already read, which decides where in the key the next byte falls.
        var consumed: Int
    }

    let configuration: WebSocketConfiguration
    let decompressor: (any MessageDecompressor)?

    var readState = ReadState.header
    /// A header split across reads, collected until complete; capacity reserved once.
    var partialHeader: [UInt8]
    var frame = FrameInProgress(opcode: .continuation, fin: true, maskingKey: MaskingKey(bits: 0), remaining: 0, consumed: 0)

    /// The opcode of the data message being reassembled, nil between messages: that is what
    /// makes a continuation frame legal and a new text/binary frame illegal.
    var messageOpcode: Opcode?
    /// The message's first frame had RSV1: collect it compressed and inflate at FIN.
    var messageIsCompressed = false
    /// The message's payload so far, unmasked (still compressed when `messageIsCompressed`).
    var message: [UInt8] = []
    /// Validates an uncompressed text message as its bytes arrive, to fail before FIN.
    var textValidator = UTF8Validator()
    /// A complete compressed message being inflated in steps; until it is delivered, no more
    /// input is parsed.
    var inflating: Inflating?
    /// The payload of the control frame being read (at most 125 bytes); capacity reserved once.
    var control: [UInt8]

    /// The code of the close frame we sent, nil until one is sent. Once set, data from the peer
    /// is dropped and only its close reply matters.
    var sentCloseCode: CloseCode?
    /// `.closeConnection` was emitted: nothing more may happen on this connection.
    var isFinished = false

    /// A connection in the open state, right after the handshake.
    public init(configuration: WebSocketConfiguration, decompressor: (any MessageDecompressor)? = nil) {
        self.configuration = configuration
        self.decompressor = decompressor
        self.partialHeader = []
        self.partialHeader.reserveCapacity(FrameHeader.maximumSize)
        self.control = []
        self.control.reserveCapacity(125)
    }

    /// Whether a close frame was sent (by `close(code:reason:)`, a protocol failure or the reply
    /// to the peer's close).
    public var isClosing: Bool { sentCloseCode != nil }

    /// Whether we sent a close and the peer's close reply has not arrived: input still matters,
    /// because the reply completes the closing handshake.
    public var isAwaitingCloseReply: Bool { sentCloseCode != nil && !isFinished }

    /// Whether a compressed message is being inflated: `receive` must be called again (with
    /// the bytes it left, or none) before anything else happens on the connection.
    public var isInflating: Bool { inflating != nil }

    /// Feeds bytes read from the socket; appends the resulting events in order.
    ///
    /// After a `.closeConnection` event, further input is ignored.
    public mutating func receive(_ bytes: UnsafeRawBufferPointer, into events: inout [WebSocketEvent]) {
        var unbounded = Int.max
        _ = receive(bytes, into: &events, inflationBudget: &unbounded)
    }

    /// Feeds bytes read from the socket until they are used up or a compressed message has
    /// taken `inflationBudget` bytes of output (decremented); returns how many bytes were
    /// consumed. The rest, and an unfinished inflation (`isInflating`), wait for the next call:
    /// a zip bomb's megabyte is spread over several of the loop's passes instead of one.
    public mutating func receive(
        _ bytes: UnsafeRawBufferPointer,
        into events: inout [WebSocketEvent],
        inflationBudget budget: inout Int
    ) -> Int {
        var offset = 0
        while !isFinished {
            do throws(WebSocketError) {
                if inflating != nil {
                    guard budget > 0 else { return offset }
                    try continueInflating(into: &events, budget: &budget)
                    continue
                }
                switch readState {
                case .header:
                    guard offset < bytes.count else { return offset }
                    offset += try readHeader(UnsafeRawBufferPointer(rebasing: bytes[offset...]))
                case .payload:
                    if frame.remaining > 0 {
                        guard offset < bytes.count else { return offset }
                        let count = min(frame.remaining, bytes.count - offset)
                        try readPayload(UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)]))
                        offset += count
                    }
                    if frame.remaining == 0 {
                        readState = .header
                        try finishFrame(into: &events)
                    }
                }
            } catch {
                fail(error, into: &events)
            }
        }
        return bytes.count
    }

    /// Starts a server-initiated close (shutdown 1001, slow consumer 1008, idle timeout...).
    ///
    /// Returns the close frame to write, or nil when a close was already sent or received.
    /// Afterwards data frames from the peer are dropped, and the peer's close reply yields
    /// `.closeConnection` without another close frame.
    public mutating func close(code: CloseCode, reason: String) -> ByteChunk? {
        guard sentCloseCode == nil, !isFinished else { return nil }
        sentCloseCode = code
        message = []
        return FrameEncoder.close(code, reason: reason)
    }

    /// Fails the connection: a close frame with the violation's code (unless one was already
    /// sent, when the peer gets nothing more), then `.closeConnection`.
    mutating func fail(_ error: WebSocketError, into events: inout [WebSocketEvent]) {
        if sentCloseCode == nil {
            sentCloseCode = error.closeCode
            events.append(.write(FrameEncoder.close(error.closeCode, reason: error.description)))
        }
        events.append(.closeConnection(code: error.closeCode, reason: error.description))
        finish()
    }

    /// Ends the connection's life and lets go of buffered data.
    mutating func finish() {
        isFinished = true
        message = []
        inflating = nil
        partialHeader = []
    }
}
