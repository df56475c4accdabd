/// An HTTP response status: the code and the reason phrase sent on the status line.
///
/// A struct rather than an enum so that a route can answer with a code this file does not name,
/// while the codes Switchboard uses are spelled once here.
public struct HTTPStatus: Sendable, Equatable, Hashable {
    public let code: Int
    public let reason: String

    public init(code: Int, reason: String) {
        self.code = code
        self.reason = reason
    }

    /// `101`: the answer to a WebSocket upgrade.
    public static let switchingProtocols = HTTPStatus(code: 101, reason: "Switching Protocols")
    public static let ok = HTTPStatus(code: 200, reason: "OK")
    public static let created = HTTPStatus(code: 201, reason: "Created")
    public static let noContent = HTTPStatus(code: 204, reason: "No Content")
    public static let notModified = HTTPStatus(code: 304, reason: "Not Modified")
    public static let badRequest = HTTPStatus(code: 400, reason: "Bad Request")
    public static let unauthorized = HTTPStatus(code: 401, reason: "Unauthorized")
    public static let forbidden = HTTPStatus(code: 403, reason: "Forbidden")
    public static let notFound = HTTPStatus(code: 404, reason: "Not Found")
    public static let methodNotAllowed = HTTPStatus(code: 405, reason: "Method Not Allowed")
    /// `411`: a request body without a `Content-Length` (chunked).
    public static let lengthRequired = HTTPStatus(code: 411, reason: "Length Required")
    /// `413`: a request body past the limit (RFC 9110 §15.5.14 renamed it from "Payload Too Large").
    public static let contentTooLarge = HTTPStatus(code: 413, reason: "Content Too Large")
    /// `426`: a plain GET to a WebSocket-only path.
    public static let upgradeRequired = HTTPStatus(code: 426, reason: "Upgrade Required")
    public static let tooManyRequests = HTTPStatus(code: 429, reason: "Too Many Requests")
    /// `431`: the request line and headers passed the parser's limit.
    public static let requestHeaderFieldsTooLarge = HTTPStatus(
        code: 431, reason: "Request Header Fields Too Large")
    public static let internalServerError = HTTPStatus(code: 500, reason: "Internal Server Error")
    public static let notImplemented = HTTPStatus(code: 501, reason: "Not Implemented")
    /// `503`: not ready yet (store loading) or shutting down.
    public static let serviceUnavailable = HTTPStatus(code: 503, reason: "Service Unavailable")
    /// `505`: a request that is not HTTP/1.x.
    public static let httpVersionNotSupported = HTTPStatus(
        code: 505, reason: "HTTP Version Not Supported")

    /// Whether a response with this status never carries a body (RFC 9110 §6.4.1):
    /// informational codes, `204` and `304`. Such responses get no `Content-Length`.
    public var forbidsBody: Bool {
        (100..<200).contains(code) || code == 204 || code == 304
    }
}

extension HTTPStatus: CustomStringConvertible {
    /// The code and reason as on the status line, e.g. `404 Not Found`.
    public var description: String { "\(code) \(reason)" }
}
