/// A way a peer broke RFC 6455, each mapped to the close code the connection answers with.
///
/// The connection never throws these to its caller: it turns them into a close frame and a
/// `.closeConnection` event whose reason is `description`, so logs say what went wrong.
public enum WebSocketError: Error, Sendable, Equatable {
    /// A client frame without the mask bit (§5.1 requires clients to mask).
    case unmaskedFrame
    /// RSV2 or RSV3 set, or RSV1 set without a negotiated compression extension.
    case reservedBitsSet
    /// An opcode the RFC reserves (3-7, 0xB-0xF).
    case reservedOpcode(UInt8)
    /// A 64-bit payload length with the most significant bit set.
    case lengthOutOfRange
    /// A close, ping or pong without FIN.
    case fragmentedControlFrame
    /// A close, ping or pong with more than 125 payload bytes.
    case oversizedControlFrame
    /// RSV1 on a control frame or a continuation frame: only a message's first frame may carry it.
    case misplacedCompressionBit
    /// A continuation frame with no fragmented message in progress.
    case unexpectedContinuation
    /// A new text or binary frame while a fragmented message is still in progress.
    case unfinishedMessage
    /// A frame or message (or its inflated form) beyond the configured limit.
    case messageTooBig
    /// A text message that is not valid UTF-8.
    case invalidUTF8
    /// A compressed message the decompressor could not inflate.
    case corruptCompressedMessage
    /// A close frame with a one-byte payload: too long for no code, too short for one.
    case truncatedCloseCode
    /// A close code a peer may not send.
    case invalidCloseCode(UInt16)
    /// A close reason that is not valid UTF-8.
    case invalidCloseReason

    /// The code of the close frame that answers this violation.
    public var closeCode: CloseCode {
        switch self {
        case .messageTooBig:
            return .messageTooBig
        case .invalidUTF8, .corruptCompressedMessage, .invalidCloseReason:
            return .invalidPayload
        case .unmaskedFrame, .reservedBitsSet, .reservedOpcode, .lengthOutOfRange, .fragmentedControlFrame,
            .oversizedControlFrame, .misplacedCompressionBit, .unexpectedContinuation, .unfinishedMessage,
            .truncatedCloseCode, .invalidCloseCode:
            return .protocolError
        }
    }
}

extension WebSocketError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .unmaskedFrame: return "client frame is not masked"
        case .reservedBitsSet: return "reserved frame bits are set"
        case .reservedOpcode(let bits): return "reserved opcode \(bits)"
        case .lengthOutOfRange: return "64-bit frame length has its top bit set"
        case .fragmentedControlFrame: return "control frame is fragmented"
        case .oversizedControlFrame: return "control frame payload exceeds 125 bytes"
        case .misplacedCompressionBit: return "RSV1 set on a control or continuation frame"
        case .unexpectedContinuation: return "continuation frame without a message in progress"
        case .unfinishedMessage: return "new data frame before the previous message finished"
        case .messageTooBig: return "message exceeds the size limit"
        case .invalidUTF8: return "text message is not valid UTF-8"
        case .corruptCompressedMessage: return "compressed message could not be inflated"
        case .truncatedCloseCode: return "close frame payload of one byte"
        case .invalidCloseCode(let code): return "close code \(code) is not allowed on the wire"
        case .invalidCloseReason: return "close reason is not valid UTF-8"
        }
    }
}
