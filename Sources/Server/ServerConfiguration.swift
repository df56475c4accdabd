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
    /// Journal bytes after which the store writes a new snapshot (`compactAfterBytes`).
    public var compactAfterBytes = 64 << 20
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
    /// Where presence changes are posted (`presenceWebhook`, an `http://` URL), if anywhere.
    public var presenceWebhook: String?
    /// Where stored messages for offline members are posted (`offlineWebhook`), if anywhere.
    public var offlineWebhook: String?
    /// The HMAC-SHA256 key that signs every webhook request (`webhookSecret`); required with a
    /// webhook URL.
    public var webhookSecret: String?
    /// Events a webhook may hold while its receiver is unreachable; later ones are dropped and
    /// counted (`webhookQueueLimit`).
    public var webhookQueueLimit = 10_000
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
