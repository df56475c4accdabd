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
    /// `Connection: keep-alive`. Always false when `hasBody`, because this parser does not read
    /// bodies and so cannot tell where the next request would begin.
    public var keepAlive: Bool
    /// Whether the request announces a body (`Transfer-Encoding`, or a non-zero `Content-Length`).
    ///
    /// The body's bytes are not consumed; Switchboard serves only GET, so the server refuses such a
    /// request and closes the connection.
    public var hasBody: Bool

    public init(
        method: String, target: String, path: String, query: [String: String] = [:],
        version: HTTPVersion = .http1_1, headers: HTTPHeaders = .init(), keepAlive: Bool = true,
        hasBody: Bool = false
    ) {
        self.method = method
        self.target = target
        self.path = path
        self.query = query
        self.version = version
        self.headers = headers
        self.keepAlive = keepAlive
        self.hasBody = hasBody
    }
}

extension HTTPRequestHead: CustomStringConvertible {
    /// The request line as received, for logs.
    public var description: String { "\(method) \(target) \(version)" }
}
