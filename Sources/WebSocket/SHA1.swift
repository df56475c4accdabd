/// SHA-1 (FIPS 180-4 §6.1), used only to derive the handshake's `Sec-WebSocket-Accept`.
///
/// SHA-1 is broken for signatures, but RFC 6455 uses it only to prove the server read the
/// client's key, so a small pure implementation is enough and keeps OpenSSL out of this target.
enum SHA1 {
    /// The 20-byte digest of `message`.
    static func hash(_ message: some Collection<UInt8>) -> [UInt8] {
        var state: (UInt32, UInt32, UInt32, UInt32, UInt32) = (
            0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0
        )
        let bytes = padded(message)
        var schedule = [UInt32](repeating: 0, count: 80)
        for blockStart in stride(from: 0, to: bytes.count, by: 64) {
            for index in 0..<16 {
                let offset = blockStart + index * 4
                schedule[index] =
                    UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16
                    | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
            }
            for index in 16..<80 {
                let mixed = schedule[index - 3] ^ schedule[index - 8] ^ schedule[index - 14] ^ schedule[index - 16]
                schedule[index] = rotateLeft(mixed, by: 1)
            }
            compress(&state, schedule: schedule)
        }
        var digest: [UInt8] = []
        digest.reserveCapacity(20)
        for word in [state.0, state.1, state.2, state.3, state.4] {
            digest.append(UInt8(truncatingIfNeeded: word >> 24))
            digest.append(UInt8(truncatingIfNeeded: word >> 16))
            digest.append(UInt8(truncatingIfNeeded: word >> 8))
            digest.append(UInt8(truncatingIfNeeded: word))
        }
        return digest
    }

    /// The message followed by 0x80, zeros up to 56 mod 64, and the bit length as a big-endian
    /// 64-bit integer, so that it splits into whole 64-byte blocks.
    private static func padded(_ message: some Collection<UInt8>) -> [UInt8] {
        var bytes = Array(message)
        let bitLength = UInt64(bytes.count) &* 8
        bytes.append(0x80)
        while bytes.count % 64 != 56 {
            bytes.append(0)
        }
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
        }
        return bytes
    }

    /// The 80 rounds over one block's expanded schedule, added into the running state.
    private static func compress(
        _ state: inout (UInt32, UInt32, UInt32, UInt32, UInt32),
        schedule: [UInt32]
    ) {
        var (a, b, c, d, e) = state
        for round in 0..<80 {
            let mixed: UInt32
            let constant: UInt32
            switch round {
            case 0..<20:
                mixed = (b & c) | (~b & d)
                constant = 0x5A82_7999
            case 20..<40:
                mixed = b ^ c ^ d
                constant = 0x6ED9_EBA1
            case 40..<60:
                mixed = (b & c) | (b & d) | (c & d)
                constant = 0x8F1B_BCDC
            default:
                mixed = b ^ c ^ d
                constant = 0xCA62_C1D6
            }
            let next = rotateLeft(a, by: 5) &+ mixed &+ e &+ constant &+ schedule[round]
            e = d
            d = c
            c = rotateLeft(b, by: 30)
            b = a
            a = next
        }
        state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e)
    }

    private static func rotateLeft(_ value: UInt32, by count: UInt32) -> UInt32 {
        (value << count) | (value >> (32 - count))
    }
}
