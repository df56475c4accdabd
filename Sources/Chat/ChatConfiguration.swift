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

    public init() {}
}
