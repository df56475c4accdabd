import Bytes

/// One element of a `Sec-WebSocket-Extensions` header: an extension name and its parameters.
///
/// Grammar (RFC 6455 §9.1 over RFC 7230 lists): `extension *( ";" name [ "=" value ] )`, where a
/// value is a token or a quoted-string. Names are kept lower-cased because extension and
/// parameter tokens are compared case-insensitively; values keep their case, unescaped.
struct ExtensionOffer: Equatable {
    /// One `name[=value]` pair; `value` is nil when the parameter has no `=`.
    struct Parameter: Equatable {
        var name: String
        var value: String?
    }

    var name: String
    var parameters: [Parameter]

    /// Separators of the header grammar that `ASCII` does not name.
    private static let comma = UInt8(ascii: ","), semicolon = UInt8(ascii: ";"), equals = UInt8(ascii: "=")

    /// Parses every comma-separated element of one header value, in order.
    ///
    /// An element that breaks the grammar yields nil in its place rather than failing the whole
    /// header, so the caller can decline that offer and still consider the next one. Empty list
    /// elements (`a, , b`) are skipped, as RFC 7230 §7 asks.
    static func parseList(_ header: String) -> [ExtensionOffer?] {
        var offers: [ExtensionOffer?] = []
        for element in split(Array(header.utf8)[...], at: comma) {
            let trimmed = trimWhitespace(element)
            if trimmed.isEmpty { continue }
            offers.append(parseElement(trimmed))
        }
        return offers
    }

    /// Parses one list element: the name, then `;`-separated parameters.
    private static func parseElement(_ element: ArraySlice<UInt8>) -> ExtensionOffer? {
        let pieces = split(element, at: semicolon)
        guard let first = pieces.first, let name = token(trimWhitespace(first)) else { return nil }
        var parameters: [Parameter] = []
        for piece in pieces.dropFirst() {
            guard let parameter = parseParameter(trimWhitespace(piece)) else { return nil }
            parameters.append(parameter)
        }
        return ExtensionOffer(name: name.asciiLowercased, parameters: parameters)
    }

    /// Parses `name`, `name=token` or `name="quoted"`.
    private static func parseParameter(_ piece: ArraySlice<UInt8>) -> Parameter? {
        guard let equalsIndex = piece.firstIndex(of: equals) else {
            return token(piece).map { Parameter(name: $0.asciiLowercased, value: nil) }
        }
        guard let name = token(trimWhitespace(piece[..<equalsIndex])) else { return nil }
        let rawValue = trimWhitespace(piece[(equalsIndex + 1)...])
        let value = rawValue.first == ASCII.quote ? quotedString(rawValue) : token(rawValue)
        return value.map { Parameter(name: name.asciiLowercased, value: $0) }
    }

    /// Splits at `separator` bytes outside quoted-strings.
    ///
    /// The quote state matters because a quoted value may legally contain `,` or `;`; a
    /// backslash inside quotes escapes the next byte, so `\"` does not end the string.
    private static func split(_ bytes: ArraySlice<UInt8>, at separator: UInt8) -> [ArraySlice<UInt8>] {
        var parts: [ArraySlice<UInt8>] = []
        var start = bytes.startIndex
        var inQuotes = false
        var escaped = false
        for index in bytes.indices {
            let byte = bytes[index]
            if escaped {
                escaped = false
            } else if inQuotes {
                if byte == ASCII.backslash { escaped = true } else if byte == ASCII.quote { inQuotes = false }
            } else if byte == ASCII.quote {
                inQuotes = true
            } else if byte == separator {
                parts.append(bytes[start..<index])
                start = index + 1
            }
        }
        parts.append(bytes[start..<bytes.endIndex])
        return parts
    }

    /// Drops optional whitespace (space and horizontal tab) at both ends.
    private static func trimWhitespace(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var slice = bytes
        while let first = slice.first, first == ASCII.space || first == ASCII.tab { slice.removeFirst() }
        while let last = slice.last, last == ASCII.space || last == ASCII.tab { slice.removeLast() }
        return slice
    }

    /// Returns the bytes as a String if they form a non-empty RFC 7230 token.
    private static func token(_ bytes: ArraySlice<UInt8>) -> String? {
        guard !bytes.isEmpty, bytes.allSatisfy(isTokenByte) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Unescapes a quoted-string that spans all of `bytes`, or returns nil if it is malformed.
    private static func quotedString(_ bytes: ArraySlice<UInt8>) -> String? {
        guard bytes.count >= 2, bytes.first == ASCII.quote, bytes.last == ASCII.quote else { return nil }
        var content: [UInt8] = []
        var escaped = false
        for byte in bytes.dropFirst().dropLast() {
            if escaped {
                content.append(byte)
                escaped = false
            } else if byte == ASCII.backslash {
                escaped = true
            } else if byte == ASCII.quote {
                return nil
            } else {
                content.append(byte)
            }
        }
        return escaped ? nil : String(decoding: content, as: UTF8.self)
    }

    /// RFC 7230 `tchar`: letters, digits and ``!#$%&'*+-.^_`|~``.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }
}
