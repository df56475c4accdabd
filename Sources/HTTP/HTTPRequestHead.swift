/// The version on a request line; only major version 1 is parsed, any minor version is kept.
public struct HTTPVersion: Sendable, Equatable, Hashable {
    public var major: Int
    public var minor: Int

    public init(major: Int, minor: Int) {
        self.major = major
        self.minor = minor
    }

    public static let http1_0 = HTTPVersion(major: 1, minor: 0)
    public static let http1_1 = HTTPVersion(major: 1, minor: 1)
}

extension HTTPVersion: CustomStringConvertible {
    /// As on the wire, e.g. `HTTP/1.1`.
    public var description: String { "HTTP/\(major).\(minor)" }
}

/// A parsed request line and header fields; what routing and the WebSocket handshake look at.
///
/// The parser has already checked the grammar, so every field here is well formed; whether the
/// method, path or headers make sense for a route is for the server to decide.
public struct HTTPRequestHead: Sendable, Equatable {
    /// The method as received, e.g. `GET`; case-sensitive per RFC 9110 §9.1, so not normalised.
    public var method: String
    /// The raw request target, e.g. `/rooms/lobby?name=al%20ice`.
    public var target: String
    /// The percent-decoded path without the query, e.g. `/rooms/lobby`.
    ///
    /// Decoding can produce `/` or `..` from `%2F` or `%2E`; code that maps paths to files must
    /// check segments after decoding.
    public var path: String
    /// The percent-decoded query parameters (`+` decodes to a space); a repeated name keeps its
    /// last value, and a name without `=` maps to the empty string.
    public var query: [String: String]
    public var version: HTTPVersion
    public var headers: HTTPHeaders
    /// Whether the connection may carry another request after the response.
    ///
    /// HTTP/1.1 keeps connections open unless `Connection: close`; HTTP/1.0 closes them unless
    /// `Connection: keep-alive`.
    public var keepAlive: Bool
    /// How the request frames its body: a `Content-Length` (0 without one), or chunked.
    ///
    /// `HTTPRequestParser` reads length-framed bodies up to its limit and refuses chunked ones
    /// (`411`), so a head handed to the server always has `.length`.
    public var body: BodyFraming

    /// The framing a request head announces for its body (RFC 9112 §6.3).
    public enum BodyFraming: Sendable, Equatable {
        /// `Content-Length` bytes follow the head (none when 0).
        case length(Int)
        /// `Transfer-Encoding` is present: the body runs until its last chunk.
        case chunked
    }

    public init(
        method: String, target: String, path: String, query: [String: String] = [:],
        version: HTTPVersion = .http1_1, headers: HTTPHeaders = .init(), keepAlive: Bool = true,
        body: BodyFraming = .length(0)
    ) {
        self.method = method
        self.target = target
        self.path = path
        self.query = query
        self.version = version
        self.headers = headers
        self.keepAlive = keepAlive
        self.body = body
    }
}

extension HTTPRequestHead: CustomStringConvertible {
    /// The request line for logs, with the path alone: a query may carry a token
    /// (`?token=...`), and tokens never reach a log.
    public var description: String { "\(method) \(path) \(version)" }
}
