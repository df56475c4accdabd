import Bytes

/// Low-level writers that append JSON text to a byte array.
///
/// Public because the chat service builds outgoing event frames straight into bytes
/// (`{"op":"message","group":` + escaped id + ...) without building a `JSONValue` first.
public enum JSONEncoding {
    /// Appends `s` as a quoted JSON string.
    ///
    /// Escapes the quote, the backslash and the control characters below 0x20: `\b \f \n \r \t`
    /// in their short forms (readable in `tree.json`), the others as `\u00XX`. Everything else,
    /// including non-ASCII, is copied as raw UTF-8, which RFC 8259 allows and which is shorter.
    @inlinable
    public static func appendEscapedString(_ s: String, to out: inout [UInt8]) {
        // A native string lends its bytes as they are, without the retain that a mutable copy
        // for `withUTF8` costs; the rare bridged or lazily stored one is made contiguous first.
        if s.utf8.withContiguousStorageIfAvailable({ appendEscaped($0, to: &out) }) != nil { return }
        var s = s
        s.withUTF8 { utf8 in appendEscaped(utf8, to: &out) }
    }

    /// Appends raw UTF-8 bytes as a quoted JSON string, escaping as `appendEscapedString` does.
    public static func appendEscaped(_ utf8: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        out.reserveCapacity(out.count + utf8.count + 2)
        out.append(ASCII.quote)
        var runStart = 0
        var i = 0
        let n = utf8.count
        while i < n {
            // Plain bytes are passed over eight at a time, up to the next byte to escape.
            if i + 8 <= n {
                let plain = ByteWord.plainPrefix(ByteWord.load(utf8, at: i))
                if plain == 8 {
                    i += 8
                    continue
                }
                i += plain
            }
            let byte = utf8[i]
            if byte >= 0x20 && byte != ASCII.quote && byte != ASCII.backslash {
                i += 1
                continue
            }
            if i > runStart {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<i]))
            }
            appendEscape(for: byte, to: &out)
            i += 1
            runStart = i
        }
        if n > runStart {
            out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<n]))
        }
        out.append(ASCII.quote)
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    private static func appendEscape(for byte: UInt8, to out: inout [UInt8]) {
        out.append(ASCII.backslash)
        switch byte {
        case ASCII.quote, ASCII.backslash: out.append(byte)
        case 0x08: out.append(0x62)  // b
        case 0x0C: out.append(0x66)  // f
        case 0x0A: out.append(0x6E)  // n
        case 0x0D: out.append(0x72)  // r
        case 0x09: out.append(0x74)  // t
        default:
            // u00XX: the high nibble of a control character is 0 or 1.
            out.append(contentsOf: [0x75, 0x30, 0x30, hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0F)]])
        }
    }

    /// Whether `utf8` needs no escaping as a JSON string: no quote, backslash or byte below 0x20.
    public static func isPlain(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        let n = utf8.count
        var i = 0
        while i + 8 <= n {
            if ByteWord.plainPrefix(ByteWord.load(utf8, at: i)) != 8 { return false }
            i += 8
        }
        while i < n {
            let byte = utf8[i]
            if byte < 0x20 || byte == ASCII.quote || byte == ASCII.backslash { return false }
            i += 1
        }
        return true
    }

    /// Appends the decimal digits of `value`.
    public static func appendInteger(_ value: Int64, to out: inout [UInt8]) {
        if value >= 0 && value < 10 {
            out.append(0x30 &+ UInt8(value))
            return
        }
        // Into a 20-byte stack buffer (a sign and Int64.min's 19 digits), appended once.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buffer in
            let count = ASCII.decimalCount(value)
            ASCII.writeDecimal(value, count: count, at: UnsafeMutableRawPointer(buffer.baseAddress!))
            out.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[..<count]))
        }
    }

    /// Appends a double: integral values below 2^53 as integers, others in the standard
    /// library's shortest round-trip form, and NaN or infinity as `null` (JSON has neither).
    public static func appendNumber(_ value: Double, to out: inout [UInt8]) {
        guard value.isFinite else {
            out.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])
            return
        }
        // Below 2^53 every integer is exact in a double, so printing it as an integer loses
        // nothing; above, `description` keeps the exponent form that says the value is rounded.
        if value.rounded(.towardZero) == value && value.magnitude < 9_007_199_254_740_992 {
            appendInteger(Int64(value), to: &out)
            return
        }
        out.append(contentsOf: value.description.utf8)
    }
}
