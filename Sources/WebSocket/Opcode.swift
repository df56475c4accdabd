/// The four-bit frame opcode of RFC 6455 §5.2, limited to the six values the RFC defines.
///
/// The reserved opcodes (3-7 and 0xB-0xF) have no case: a frame carrying one fails the connection
/// with 1002, so `Opcode(rawValue:)` returning nil is exactly that check.
public enum Opcode: UInt8, Sendable {
    /// A further fragment of the data message in progress.
    case continuation = 0
    /// The first frame of a text message (UTF-8 payload).
    case text = 1
    /// The first frame of a binary message.
    case binary = 2
    /// Starts or answers the closing handshake.
    case close = 8
    /// Asks the peer for a pong with the same payload.
    case ping = 9
    /// Answers a ping, or an unsolicited heartbeat.
    case pong = 10

    /// Whether this is a control frame (close, ping, pong).
    ///
    /// RFC 6455 §5.5 gives every control opcode the high bit of the nibble, so one mask decides it.
    @inlinable
    public var isControl: Bool { rawValue & 0x8 != 0 }
}
