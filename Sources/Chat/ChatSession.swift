/// One WebSocket connection's standing with the chat service.
///
/// Confined to the event loop thread, like the service that owns it.
final class ChatSession<Client: AnyObject> {
    let client: Client
    /// The client's address as per-address limits (signup, login) count it: an IPv6 client's
    /// /64 network (`ClientAddress.limitKey`).
    let address: String
    /// The signed-in user, nil until `signup`, `login` or `auth` succeeds.
    var userID: String?
    /// The session id inside the token, what `logout` revokes.
    var sessionID: String?
    var tokenExpiry: Int64 = 0
    /// Groups this connection receives live events for.
    var subscriptions: Set<String> = []
    var rate: RateLimiter
    /// Frames that were binary or not a JSON object, counted towards a close.
    var badFrames = 0
    /// While a `send` of this connection reads the disk (is its `clientId` stored?), the sends
    /// it received after that one, to be stored in order once the read is done; nil when no
    /// send reads.
    var sendsBehindRead: [() -> Void]?
    /// False once the connection is gone: late completions (a hash, a flush) then do nothing.
    var isOpen = true

    init(client: Client, address: String, rate: RateLimiter) {
        self.client = client
        self.address = address
        self.rate = rate
    }
}
