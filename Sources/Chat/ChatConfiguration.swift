/// The settings the chat service runs with.
public struct ChatConfiguration: Sendable {
    /// Whether `signup` is open (`allowSignup`).
    public var allowSignup = true
    /// How long a token lives, in seconds (`tokenLifetime`, default 30 days).
    public var tokenLifetime: Int64 = 30 * 24 * 3600
    /// Requests per second per connection (`messagesPerSecond`); bursts of twice that pass.
    public var messagesPerSecond = 100
    /// The longest message text in bytes of UTF-8; longer gets `too_large`.
    public var maxTextBytes = 16 * 1024
    /// The largest request accepted by the JSON parser, in bytes.
    public var maxRequestBytes = 128 * 1024
    /// PBKDF2 iterations for new password hashes.
    public var passwordIterations = PasswordHash.defaultIterations
    /// Bad frames (binary or not a JSON object) a connection may send before it is closed.
    public var maxBadFrames = 10
    /// The longest password accepted by `signup` and `login`, in bytes: hashing costs grow
    /// with it.
    public var maxPasswordBytes = 1024
    /// `send`s per second one user may make across all of its connections (bursts of twice
    /// that), so opening more connections does not multiply the per-connection rate.
    public var userMessagesPerSecond = 100
    /// Signups per hour from one client address (all of them may come at once).
    public var signupsPerHour = 10
    /// Groups one user may `create` per hour (all of them may come at once): every group stays
    /// in memory and on disk, so a signed-in user must not be able to make them without end.
    public var groupsPerHour = 100
    /// History kept per group when the store compacts: at most this many messages (0: all),
    /// none older than this many milliseconds (0: forever).
    public var retentionMessages = 0
    public var retentionMilliseconds: Int64 = 0
    /// Bytes of media one user may keep stored (`mediaQuotaBytes`, default 100 MiB).
    public var mediaQuotaBytes = 100 << 20
    /// Uploads one user may start per minute (`uploadsPerMinute`), all of them at once if
    /// need be.
    public var uploadsPerMinute = 30

    public init() {}
}
