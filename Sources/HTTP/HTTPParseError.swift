/// Why a request head could not be parsed; each case maps to the status the server answers with.
///
/// The connection is unusable after any of these (the parser cannot find where the next request
/// starts), so the server sends the matching error response without keep-alive and closes.
public enum HTTPParseError: Error, Sendable, Equatable {
    /// The request line and headers passed the parser's `maxHeadBytes`: answered with `431`.
    case headersTooLarge
    /// The head breaks the HTTP/1.1 grammar; the string says how, for the `400` body and logs.
    case malformed(String)
    /// The request line names a version other than HTTP/1.x: answered with `505`.
    case unsupportedVersion
    /// The announced `Content-Length` passes the parser's `maxBodyBytes`: answered with `413`.
    case bodyTooLarge(limit: Int)
    /// The body is chunked (`Transfer-Encoding`); only `Content-Length` bodies are read, so the
    /// answer is `411 Length Required`.
    case lengthRequired

    /// The status the server answers this failure with.
    public var status: HTTPStatus {
        switch self {
        case .headersTooLarge: .requestHeaderFieldsTooLarge
        case .malformed: .badRequest
        case .unsupportedVersion: .httpVersionNotSupported
        case .bodyTooLarge: .contentTooLarge
        case .lengthRequired: .lengthRequired
        }
    }
}

extension HTTPParseError: CustomStringConvertible {
    /// A sentence for logs and for the message of the JSON error body.
    public var description: String {
        switch self {
        case .headersTooLarge: "The request line and headers are larger than the server accepts."
        case .malformed(let reason): "The request is malformed: \(reason)."
        case .unsupportedVersion: "Only HTTP/1.0 and HTTP/1.1 are supported."
        case .bodyTooLarge(let limit): "The request body is larger than the \(limit) bytes the server accepts."
        case .lengthRequired: "Send the body with a Content-Length; chunked request bodies are not accepted."
        }
    }
}
