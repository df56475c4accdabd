extension Crypto {
    /// The base64url alphabet of RFC 4648 §5: `-` and `_` replace `+` and `/` so tokens survive
    /// URLs, cookies and file names unescaped.
    static let base64URLAlphabet: [UInt8] = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Maps an ASCII byte to its 6-bit value, or 0xFF for a byte outside the alphabet.
    static let base64URLValues: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, symbol) in base64URLAlphabet.enumerated() {
            table[Int(symbol)] = UInt8(value)
        }
        return table
    }()

    /// Encodes bytes as unpadded base64url (RFC 4648 §5).
    public static func base64URLEncode(_ bytes: [UInt8]) -> String {
        let encodedCount = (bytes.count * 4 + 2) / 3
        let alphabet = base64URLAlphabet
        return String(unsafeUninitializedCapacity: encodedCount) { output in
            var out = 0
            var index = 0
            // Three input bytes become four 6-bit symbols; a tail of one or two bytes becomes
            // two or three symbols, with no `=` padding.
            while index < bytes.count {
                let remaining = bytes.count - index
                let b0 = UInt32(bytes[index])
                let b1 = remaining > 1 ? UInt32(bytes[index + 1]) : 0
                let b2 = remaining > 2 ? UInt32(bytes[index + 2]) : 0
                let group = b0 << 16 | b1 << 8 | b2
                let symbols = min(remaining, 3) + 1
                for position in 0..<symbols {
                    let shift = UInt32(18 - 6 * position)
                    output[out] = alphabet[Int(group >> shift & 0x3F)]
                    out += 1
                }
                index += 3
            }
            return out
        }
    }

    /// Decodes unpadded base64url (RFC 4648 §5).
    ///
    /// - Returns: nil for a byte outside the alphabet, padding, an impossible length (one
    ///   symbol left over), or non-zero unused bits in the last symbol, so that every byte
    ///   string has exactly one accepted encoding (a token cannot be altered and still match).
    public static func base64URLDecode(_ s: String) -> [UInt8]? {
        var text = s
        return text.withUTF8 { symbols -> [UInt8]? in
            let tail = symbols.count % 4
            guard tail != 1 else {
                return nil
            }
            let decodedCount = symbols.count / 4 * 3 + (tail == 0 ? 0 : tail - 1)
            let values = base64URLValues
            var valid = true
            let bytes = [UInt8](unsafeUninitializedCapacity: decodedCount) { output, initialized in
                var out = 0
                var index = 0
                while index < symbols.count {
                    let count = min(4, symbols.count - index)
                    var group: UInt32 = 0
                    for position in 0..<4 {
                        let value = position < count ? values[Int(symbols[index + position])] : 0
                        guard value != 0xFF else {
                            valid = false
                            return
                        }
                        group = group << 6 | UInt32(value)
                    }
                    let produced = count - 1
                    // The bits below the last produced byte must be zero (canonical encoding).
                    let unusedBits = UInt32(24 - 8 * produced)
                    guard count == 4 || group & (1 << unusedBits - 1) == 0 else {
                        valid = false
                        return
                    }
                    for position in 0..<produced {
                        output[out] = UInt8(truncatingIfNeeded: group >> UInt32(16 - 8 * position))
                        out += 1
                    }
                    index += 4
                }
                initialized = out
            }
            return valid ? bytes : nil
        }
    }
}
