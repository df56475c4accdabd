import Bytes

/// Byte classes of the HTTP/1.1 grammar (RFC 9110 §5.6, RFC 9112 §3).
///
/// The parser checks every byte of a head against these classes, so they are plain comparisons
/// with no allocation; the head is small and parsed once per request, which keeps a switch
/// cheaper to read than a lookup table and fast enough.
enum HTTPGrammar {
    /// Whether `byte` is a `tchar`, the alphabet of methods and header names.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"),
            UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
            UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// Whether `byte` may appear in a request target: visible ASCII only.
    ///
    /// Spaces would make the request line ambiguous and bytes above 0x7E must be percent-encoded,
    /// so anything outside `VCHAR` is a malformed target.
    static func isTargetByte(_ byte: UInt8) -> Bool {
        byte >= 0x21 && byte <= 0x7E
    }

    /// Whether `byte` may appear in a header value: `VCHAR`, `SP`, `HTAB` or `obs-text`.
    ///
    /// Control characters (CR, LF, NUL, DEL and the rest) are refused because a value that
    /// smuggles them could split a header when echoed or logged.
    static func isFieldValueByte(_ byte: UInt8) -> Bool {
        byte == ASCII.tab || (byte >= 0x20 && byte != 0x7F)
    }

    /// Whether `byte` is optional whitespace (`OWS`): space or horizontal tab.
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == ASCII.space || byte == ASCII.tab
    }

    /// The value of an ASCII hexadecimal digit, or nil for any other byte.
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Whether two header names are equal ignoring ASCII case, compared without allocating.
    static func namesEqual(_ lhs: String, _ rhs: String) -> Bool {
        var left = lhs.utf8.makeIterator()
        var right = rhs.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil):
                return true
            case let (l?, r?) where ASCII.lowercased(l) == ASCII.lowercased(r):
                continue
            default:
                return false
            }
        }
    }
}
