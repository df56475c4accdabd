import Bytes

/// What a connection asks its caller to do, or reports, after reading bytes.
///
/// Events come out in the order they must be acted on: a `.write` before a later
/// `.closeConnection` must reach the socket first.
public enum WebSocketEvent: Sendable, Equatable {
    /// A complete, UTF-8-validated text message (payload bytes, unmasked, inflated).
    ///
    /// `compressed` is the payload as it arrived when it was compressed and stands on its own
    /// (`DecompressedMessage.standsAlone`), so a relay can send it on without
    /// compressing the message again; nil otherwise.
    case text([UInt8], compressed: [UInt8]? = nil)
    /// A complete binary message (unmasked, inflated); `compressed` as for `text`.
    case binary([UInt8], compressed: [UInt8]? = nil)
    /// A pong arrived with this payload; informational, no reply is due.
    case pong([UInt8])
    /// Bytes the caller must write to the socket, in order with everything else written
    /// (automatic pong replies, the close reply).
    case write(ByteChunk)
    /// The caller must close the TCP connection after writing everything queued so far.
    ///
    /// `code` is what the close handshake carried: the peer's code when the peer started it
    /// (1005 when its close frame had none), the code we sent when we started it or failed the
    /// connection. `reason` is a short human text for logs.
    case closeConnection(code: CloseCode, reason: String)

    /// Events are equal when they are the same case with the same bytes; written chunks are
    /// compared by content, since `ByteChunk` is a reference with no identity worth comparing.
    public static func == (lhs: WebSocketEvent, rhs: WebSocketEvent) -> Bool {
        switch (lhs, rhs) {
        case (.text(let left, let leftCompressed), .text(let right, let rightCompressed)),
            (.binary(let left, let leftCompressed), .binary(let right, let rightCompressed)):
            return left == right && leftCompressed == rightCompressed
        case (.pong(let left), .pong(let right)):
            return left == right
        case (.write(let left), .write(let right)):
            return left.bytes.elementsEqual(right.bytes)
        case (.closeConnection(let leftCode, let leftReason), .closeConnection(let rightCode, let rightReason)):
            return leftCode == rightCode && leftReason == rightReason
        default:
            return false
        }
    }
}
