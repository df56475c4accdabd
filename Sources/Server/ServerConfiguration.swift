import Deflate

/// Every setting the server runs with, already validated by the executable.
///
/// Defaults here are the embedded defaults; `Config/switchboard.json` lists the same values.
public struct ServerConfiguration: Sendable {
    public var host = "0.0.0.0"
    public var port = 8080
    public var tlsPort = 8443
    public var tlsCertificatePath: String?
    public var tlsKeyPath: String?
    public var dataDirectory = "./data"
    public var durability = "fsync"
    /// Journal bytes after which the store starts a checkpoint (`compactAfterBytes`).
    public var compactAfterBytes = 64 << 20
    /// Size at which a group's open message segment is sealed and a new one begun (`segmentBytes`).
    public var segmentBytes = 1 << 20
    /// Newest messages per group kept in memory; older pages are read from disk (`recentMessages`).
    public var recentMessages = 200
    /// How long a session token lives, in seconds (`tokenLifetime`, default 30 days).
    public var tokenLifetime = 30 * 24 * 3600
    /// Serve `/echo` (for connectivity checks and the Autobahn conformance suite).
    public var echo = true
    /// Origins allowed to open WebSockets from a browser besides the server's own;
    /// `*` allows any. Requests without an Origin header (non-browser clients) are allowed.
    public var allowedOrigins: [String] = []
    public var allowSignup = true
    public var allowAnonymousRooms = true
    public var adminToken: String?
    public var authSecret: String?
    /// permessage-deflate (RFC 7692); `deflate.isEnabled` is the `compression` setting.
    public var deflate = DeflateConfiguration()
    public var maxMessageSize = 1 << 20
    public var maxConnections = 100_000
    /// Bytes a connection may have waiting to be sent before it is closed as a slow consumer.
    public var outboundQueueBytes = 4 << 20
    public var messagesPerSecond = 100
    public var handshakeTimeout = 10.0
    public var idleTimeout = 60.0
    public var pingInterval = 25.0
    /// Where the browser client's files live (served at `/`).
    public var publicDirectory = "Public"

    public init() {}
}
