/// JSON responses: docs/protocol.md's error body and plain JSON bodies for the API endpoints.
///
/// Each carries `X-Content-Type-Options: nosniff`: an error may echo the request's path, and a
/// browser must never read such a body as anything but JSON.
extension HTTPResponse {
    /// `{"error":"<code>","message":"<message>"}` with `Content-Type: application/json`, the body
    /// every HTTP error carries (docs/protocol.md, "Endpoints").
    public static func error(_ status: HTTPStatus, code: String, message: String) -> HTTPResponse {
        var body: [UInt8] = []
        body.reserveCapacity(32 + code.utf8.count + message.utf8.count)
        body.append(contentsOf: #"{"error":"#.utf8)
        appendJSONString(code, to: &body)
        body.append(contentsOf: #","message":"#.utf8)
        appendJSONString(message, to: &body)
        body.append(UInt8(ascii: "}"))
        return HTTPResponse(status: status, headers: jsonHeaders, body: body)
    }

    /// A response whose body is `body`, already JSON, with `Content-Type: application/json`.
    public static func json(_ status: HTTPStatus, body: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: jsonHeaders, body: Array(body.utf8))
    }

    private static let jsonHeaders: HTTPHeaders = ["Content-Type": "application/json", "X-Content-Type-Options": "nosniff"]

    /// Appends `text` as a quoted JSON string (RFC 8259 §7).
    ///
    /// Quote, backslash and the C0 controls must be escaped; the common ones get their short
    /// escapes and the rest `\u00XX`. Everything else, UTF-8 included, is copied as is.
    static func appendJSONString(_ text: String, to out: inout [UInt8]) {
        let hexDigits = Array("0123456789abcdef".utf8)
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): out.append(contentsOf: #"\\"#.utf8)
            case 0x0A: out.append(contentsOf: #"\n"#.utf8)
            case 0x0D: out.append(contentsOf: #"\r"#.utf8)
            case 0x09: out.append(contentsOf: #"\t"#.utf8)
            case 0x08: out.append(contentsOf: #"\b"#.utf8)
            case 0x0C: out.append(contentsOf: #"\f"#.utf8)
            case 0x00..<0x20:
                // A control byte is below 0x20, so its high nibble is 0 or 1: "\u00" plus two hex digits.
                out.append(contentsOf: #"\u00"#.utf8)
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0F)])
            default:
                out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
