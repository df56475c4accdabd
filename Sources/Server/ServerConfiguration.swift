import Deflate
import Redis

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
    /// Event loop threads (`threads`); 0: one per core this process may run on.
    public var threads = 0
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
    /// The cluster's Redis (`redis`); nil runs a single node with nothing shared
    /// (docs/cluster.md).
    public var redis: RedisURL?
    /// This node's name in the cluster (`nodeId`); generated at start when unset.
    public var nodeId: String?
    /// Seconds after its last heartbeat that a node's members leave the cluster's rooms
    /// (`nodeTimeout`); it renews the heartbeat three times in that time.
    public var nodeTimeout = 10.0
    /// Journal entries after which a node writes a snapshot of the chat history to Redis and
    /// the journal is trimmed behind the snapshot before it (`snapshotEntries`).
    public var snapshotEntries = 100_000
    /// permessage-deflate (RFC 7692); `deflate.isEnabled` is the `compression` setting.
    public var deflate = DeflateConfiguration()
    public var maxMessageSize = 1 << 20
    /// Open client sockets of any kind (HTTP, WebSocket, TLS handshakes); more are closed at
    /// accept with `503`. Lowered at start to what the descriptor limit allows.
    public var maxConnections = 100_000
    /// Open sockets from one client address; more are closed at accept with `429` (0: no cap).
    public var maxConnectionsPerAddress = 1000
    /// HTTP requests on one keep-alive connection; the last answer says `Connection: close`.
    public var maxRequestsPerConnection = 100
    /// Bytes a connection may have waiting to be sent before it is closed as a slow consumer.
    public var outboundQueueBytes = 4 << 20
    public var messagesPerSecond = 100
    /// Messages and bytes per second one `/rooms` connection may publish (bursts of twice
    /// that); more are dropped with a notice, and three times the rate within a second closes
    /// the connection with 1008.
    public var roomMessagesPerSecond = 100
    public var roomBytesPerSecond = 1 << 20
    /// Messages per second one user may `send`, across all of the user's connections.
    public var userMessagesPerSecond = 100
    /// Signups per hour from one client address.
    public var signupsPerHour = 10
    /// Groups one user may create per hour.
    public var groupsPerHour = 100
    /// Per-group history kept at compaction: at most this many messages (0: all) and none
    /// older than this many days (0: forever).
    public var retentionMessages = 0
    public var retentionDays = 0
    public var handshakeTimeout = 10.0
    public var idleTimeout = 60.0
    public var pingInterval = 25.0
    /// Seconds between the presence stream's heartbeat comments (`heartbeatInterval`).
    public var heartbeatInterval = 15.0
    /// The largest upload in bytes (`maxUploadBytes`, default 10 MiB); `413` past it.
    public var maxUploadBytes = 10 << 20
    /// Bytes of media one user may keep (`mediaQuotaBytes`, default 100 MiB).
    public var mediaQuotaBytes = 100 << 20
    /// Uploads one user may start per minute (`uploadsPerMinute`).
    public var uploadsPerMinute = 30
    /// Seconds an upload's body may take to arrive (`uploadTimeout`); `408` after that.
    public var uploadTimeout = 60.0
    /// Where the browser client's files live (served at `/`).
    public var publicDirectory = "Public"

    public init() {}
}
