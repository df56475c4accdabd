import Bytes

/// Encodes the server's frames: unmasked (RFC 6455 §5.1 forbids a server to mask), with the
/// shortest length form.
///
/// Each frame is one `ByteChunk` holding header and payload, allocated once, so the relay can
/// queue the same chunk on every member socket of a room.
public enum FrameEncoder {
    /// The header size for a payload of `payloadCount` bytes: 2, 4 (16-bit length) or 10
    /// (64-bit length).
    @inlinable
    public static func headerSize(payloadCount: Int) -> Int {
        if payloadCount <= 125 { return 2 }
        if payloadCount <= 0xFFFF { return 4 }
        return 10
    }

    /// One frame carrying `payload`.
    ///
    /// `fin: false` starts or continues a fragmented message; `rsv1` marks a compressed message's
    /// first frame when permessage-deflate is on.
    public static func frame(
        _ opcode: Opcode,
        payload: UnsafeRawBufferPointer,
        fin: Bool = true,
        rsv1: Bool = false
    ) -> ByteChunk {
        let headerSize = headerSize(payloadCount: payload.count)
        return ByteChunk(count: headerSize + payload.count) { target in
            writeHeader(into: target, opcode: opcode, payloadCount: payload.count, fin: fin, rsv1: rsv1)
            if !payload.isEmpty {
                UnsafeMutableRawBufferPointer(rebasing: target[headerSize...]).copyMemory(from: payload)
            }
        }
    }

    /// One frame carrying `payload`.
    public static func frame(_ opcode: Opcode, payload: [UInt8], fin: Bool = true, rsv1: Bool = false) -> ByteChunk {
        payload.withUnsafeBytes { frame(opcode, payload: $0, fin: fin, rsv1: rsv1) }
    }

    /// A close frame with `code` and as much of `reason` as fits.
    ///
    /// Control payloads are capped at 125 bytes (§5.5), two of them the code, so the reason is
    /// cut to 123 bytes, backing off to the start of a UTF-8 sequence so it stays valid text.
    public static func close(_ code: CloseCode, reason: String = "") -> ByteChunk {
        var reasonBytes = Array(reason.utf8)
        if reasonBytes.count > 123 {
            var end = 123
            // A byte 10xxxxxx continues a sequence: cutting before it would split a character.
            while end > 0 && reasonBytes[end] & 0xC0 == 0x80 {
                end -= 1
            }
            reasonBytes.removeSubrange(end...)
        }
        let payloadCount = 2 + reasonBytes.count
        return ByteChunk(count: 2 + payloadCount) { target in
            writeHeader(into: target, opcode: .close, payloadCount: payloadCount, fin: true, rsv1: false)
            target[2] = UInt8(truncatingIfNeeded: code.rawValue >> 8)
            target[3] = UInt8(truncatingIfNeeded: code.rawValue)
            for (offset, byte) in reasonBytes.enumerated() {
                target[4 + offset] = byte
            }
        }
    }

    /// Writes the header for an unmasked frame at the start of `target`.
    static func writeHeader(
        into target: UnsafeMutableRawBufferPointer,
        opcode: Opcode,
        payloadCount: Int,
        fin: Bool,
        rsv1: Bool
    ) {
        target[0] = (fin ? 0x80 : 0) | (rsv1 ? 0x40 : 0) | opcode.rawValue
        if payloadCount <= 125 {
            target[1] = UInt8(payloadCount)
        } else if payloadCount <= 0xFFFF {
            // 126 announces a 16-bit big-endian length in the next two bytes.
            target[1] = 126
            target[2] = UInt8(truncatingIfNeeded: payloadCount >> 8)
            target[3] = UInt8(truncatingIfNeeded: payloadCount)
        } else {
            // 127 announces a 64-bit big-endian length in the next eight bytes.
            target[1] = 127
            target.storeBytes(of: UInt64(payloadCount).bigEndian, toByteOffset: 2, as: UInt64.self)
        }
    }
}
