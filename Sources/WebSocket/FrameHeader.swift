/// The header of one received frame (RFC 6455 §5.2), decoded but not yet judged.
///
/// Parsing only splits the bits apart; `WebSocketConnection` decides which combinations are
/// violations, because that depends on the connection's state (message in progress, extension).
struct FrameHeader: Sendable {
    /// The frame is the last of its message.
    var fin: Bool
    /// RSV1: "this message is compressed" when permessage-deflate is negotiated.
    var rsv1: Bool
    /// RSV2 or RSV3, which no extension of ours defines.
    var rsv2or3: Bool
    /// The raw opcode nibble, kept raw so reserved values can be reported.
    var opcodeBits: UInt8
    /// The mask bit; clients must set it.
    var isMasked: Bool
    /// The masking key, zero when the frame is unmasked.
    var maskingKey: MaskingKey
    /// The payload length as sent; may exceed `Int.max`, which is a violation.
    var payloadLength: UInt64
    /// How many bytes the header occupied (2 to 14).
    var size: Int

    /// The largest header: 2 fixed bytes, an 8-byte extended length and a 4-byte key.
    static let maximumSize = 14

    /// The full header size implied by the second header byte, which carries both the mask bit
    /// and the length form.
    static func size(secondByte: UInt8) -> Int {
        let lengthField: Int
        switch secondByte & 0x7F {
        case 126: lengthField = 2
        case 127: lengthField = 8
        default: lengthField = 0
        }
        return 2 + lengthField + (secondByte & 0x80 != 0 ? 4 : 0)
    }

    /// Parses the header at the start of `bytes`, or returns nil when `bytes` holds only part of it.
    static func parse(_ bytes: UnsafeRawBufferPointer) -> FrameHeader? {
        guard bytes.count >= 2 else { return nil }
        let first = bytes[0]
        let second = bytes[1]
        let size = Self.size(secondByte: second)
        guard bytes.count >= size else { return nil }
        var length = UInt64(second & 0x7F)
        var cursor = 2
        if length == 126 {
            length = UInt64(bytes[2]) << 8 | UInt64(bytes[3])
            cursor = 4
        } else if length == 127 {
            length = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 2, as: UInt64.self))
            cursor = 10
        }
        let isMasked = second & 0x80 != 0
        let key = isMasked ? bytes.loadUnaligned(fromByteOffset: cursor, as: UInt32.self) : 0
        return FrameHeader(
            fin: first & 0x80 != 0,
            rsv1: first & 0x40 != 0,
            rsv2or3: first & 0x30 != 0,
            opcodeBits: first & 0x0F,
            isMasked: isMasked,
            maskingKey: MaskingKey(bits: key),
            payloadLength: length,
            size: size
        )
    }
}
