/// Base64 (RFC 4648) in its two forms: the standard alphabet with `=` padding (§4), which the
/// WebSocket handshake's keys use, and the URL-safe alphabet without padding (§5), which tokens,
/// salts and invite codes use so they survive URLs, cookies and file names unescaped.
///
/// Used a few times per connection or request, never per message.
public enum Base64 {
    public enum Alphabet: Sendable {
        /// `+` and `/`, padded to a multiple of four characters.
        case standard
        /// `-` and `_`, unpadded, and decoded strictly: every byte string has exactly one accepted
        /// encoding, so a signed token cannot be altered and still match.
        case url

        var symbols: [UInt8] {
            switch self {
            case .standard: Base64.standardSymbols
            case .url: Base64.urlSymbols
            }
        }

        var values: [UInt8] {
            switch self {
            case .standard: Base64.standardValues
            case .url: Base64.urlValues
            }
        }
    }

    private static let standardSymbols = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlSymbols = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let standardValues = valueTable(standardSymbols)
    private static let urlValues = valueTable(urlSymbols)

    /// Maps an ASCII byte to its 6-bit value, or 0xFF for a byte outside the alphabet.
    private static func valueTable(_ symbols: [UInt8]) -> [UInt8] {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, symbol) in symbols.enumerated() { table[Int(symbol)] = UInt8(value) }
        return table
    }

    /// Encodes `bytes`: three bytes become four symbols; a tail of one or two bytes becomes two or
    /// three symbols, followed by `=` padding in the standard form only.
    public static func encode(_ bytes: [UInt8], _ alphabet: Alphabet = .standard) -> String {
        let symbols = alphabet.symbols
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let remaining = bytes.count - index
            // Pack up to three bytes into the low 24 bits of a group; missing bytes read as zero.
            let group =
                UInt32(bytes[index]) << 16
                | (remaining > 1 ? UInt32(bytes[index + 1]) << 8 : 0)
                | (remaining > 2 ? UInt32(bytes[index + 2]) : 0)
            let produced = min(remaining, 3) + 1
            for position in 0..<produced {
                output.append(symbols[Int(group >> UInt32(18 - 6 * position) & 0x3F)])
            }
            if alphabet == .standard {
                for _ in produced..<4 { output.append(UInt8(ascii: "=")) }
            }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes `text`, or returns nil for a symbol outside the alphabet, an impossible length,
    /// padding anywhere but the end of the standard form (or at all in the URL form), or, in the
    /// URL form, non-zero unused bits in the last symbol.
    public static func decode(_ text: String, _ alphabet: Alphabet = .standard) -> [UInt8]? {
        var symbols = Array(text.utf8)
        if alphabet == .standard {
            guard symbols.count % 4 == 0 else { return nil }
            // Padding may only fill the last one or two places of the final group.
            var padding = 0
            while padding < 2, symbols.last == UInt8(ascii: "=") {
                symbols.removeLast()
                padding += 1
            }
        }
        let tail = symbols.count % 4
        guard tail != 1 else { return nil }
        let values = alphabet.values
        var output: [UInt8] = []
        output.reserveCapacity(symbols.count / 4 * 3 + 2)
        var index = 0
        while index < symbols.count {
            let count = min(4, symbols.count - index)
            var group: UInt32 = 0
            for position in 0..<4 {
                let value = position < count ? values[Int(symbols[index + position])] : 0
                guard value != 0xFF else { return nil }
                group = group << 6 | UInt32(value)
            }
            let produced = count - 1
            if alphabet == .url && count < 4 {
                // The bits below the last produced byte must be zero (canonical encoding).
                let unusedBits = UInt32(24 - 8 * produced)
                guard group & (1 << unusedBits - 1) == 0 else { return nil }
            }
            for position in 0..<produced {
                output.append(UInt8(truncatingIfNeeded: group >> UInt32(16 - 8 * position)))
            }
            index += 4
        }
        return output
    }
}
