import JSON
import Logging
import Relay
import Store

/// The chat service of `/ws`: accounts, groups, messages, receipts and presence.
///
/// Holds the typed state built from the store's tree and keeps the store in step: every change
/// is applied here and appended to the store as mutations, and its `ok` reply (and, for a
/// message, its event to the other subscribers) goes out only when the store reports the ticket
/// durable (`durable(through:)`). Messages join the readable history at that moment too, so no
/// one ever sees a message that a crash could still take away.
///
/// Confined to the event loop thread; talks to the world only through `Transport`.
public final class ChatService<Transport: ChatTransport> {
    public typealias Client = Transport.Client

    public internal(set) var state: ChatState
    public let configuration: ChatConfiguration
    let store: Store
    unowned let transport: Transport
    /// The key tokens are signed with. In cluster mode the cluster's shared one, set when the
    /// node first reaches Redis; empty until then, and no one can sign in with an empty key.
    public var secret: [UInt8]
    let logger: Logger
    let clock: ChatClock
    var ids = PushIDGenerator()

    var sessions: [ObjectIdentifier: ChatSession<Client>] = [:]
    /// Signed-in connections per user: a user with any is `online` in `users`.
    var userSessions: [String: [ObjectIdentifier: ChatSession<Client>]] = [:]
    /// The earliest expiry (seconds) among the tokens of signed-in connections, or later:
    /// `signOutExpired` looks at the sessions only once the clock has reached it, so at most
    /// once a second (expiries are whole seconds).
    var nextTokenExpiry = Int64.max
    /// Connections subscribed to each group: the recipients of its events.
    let subscribers = RoomRegistry<Client>()
    /// Per group, the users with at least one subscribed connection, and how many.
    var online: [String: [String: Int]] = [:]
    /// Cluster mode: per group, the users online on other nodes, and on how many
    /// (`remotePresence`). A user is online in a group when it is here or there.
    var remoteOnline: [String: [String: Int]] = [:]
    /// Cluster mode: told when a user comes online in a group on this node (true) or is no
    /// longer online here (false), for the other nodes.
    public var onLocalPresence: ((String, String, Bool) -> Void)?
    /// Cluster mode: told when a user on this node is typing in a group (group, user), for the
    /// subscribers on other nodes.
    public var onTyping: ((String, String) -> Void)?
    /// Cluster mode: claims an email for a new account (email, user id) across the cluster:
    /// true when it is this account's now, false when another account has it. `releaseEmail`
    /// gives a claim back when the account could not be stored.
    public var claimEmail: ((String, String, @escaping (Result<Bool, ChatError>) -> Void) -> Void)?
    public var releaseEmail: ((String, String) -> Void)?
    /// Per group, the users whose online state changed since the last `flushPresence`, with
    /// the state they had before the first change, so a join and a leave within one window
    /// cancel out.
    var presenceChanges: [String: [String: Bool]] = [:]
    /// Emails being signed up while their password hashes, so two signups cannot both win.
    var reservedEmails: Set<String> = []
    /// Told of every folded presence change, as `presence` events go out (the server's event
    /// stream and presence webhook).
    public var onPresenceChange: ((PresenceChange) -> Void)?
    /// Told of every group message stored while members other than the sender had no open
    /// connection (the offline-delivery webhook); without it that list is never computed.
    public var onOfflineDelivery: ((OfflineDelivery) -> Void)? {
        get { offlineDeliveryHandler }
        set { offlineDeliveryHandler = newValue }
    }
    /// Failed logins by account and by address (password guessing).
    var loginThrottle = LoginThrottle()
    /// Signups by client address (`signupsPerHour`).
    var signupRate: KeyedRateLimiter
    /// Groups created by user (`groupsPerHour`).
    var groupRate: KeyedRateLimiter
    /// `send`s by user, across connections (`userMessagesPerSecond`).
    var userSendRate: KeyedRateLimiter
    /// Uploads by user (`uploadsPerMinute`).
    var uploadRate: KeyedRateLimiter
    /// Bytes of uploads accepted by user whose records are not yet stored, so that
    /// concurrent uploads cannot together pass the quota.
    var uploadsInFlight: [String: Int] = [:]

    /// Completions and messages waiting for the store (messages not yet durable are not yet
    /// in `state`).
    var pending = PendingCommits()
    /// The completions `finish` runs, kept between calls so that their array is reused.
    var readyCompletions: [PendingCompletion] = []
    /// Reads of stored messages waiting for the store's reader, by tag.
    var reads: [UInt64: (query: MessageQuery, completion: ([ChatMessage]?, Bool, String?) -> Void)] = [:]
    var nextReadTag: UInt64 = 0
    /// False while the cluster's journal cannot take changes (cluster mode, Redis unreachable or
    /// not caught up with): every operation that would change something answers `unavailable`.
    public var acceptsChanges: Bool {
        get { changesAccepted }
        set { changesAccepted = newValue }
    }
    /// Cluster mode: changes that could not be passed on to the cluster are taken back out of
    /// the local store (a message that failed is deleted there again).
    public var isReplicated: Bool {
        get { replicated }
        set { replicated = newValue }
    }
    // The three settings above are stored internally: every access to a public stored
    // property pays a run-time exclusivity check (the compiler cannot see the other modules'
    // accesses), and these are read on every `send` (docs/architecture.md, "Exclusivity
    // checks on the message path").
    private var offlineDeliveryHandler: ((OfflineDelivery) -> Void)?
    private var changesAccepted = true
    private var replicated = false

    public init(
        state: ChatState, store: Store, transport: Transport, secret: [UInt8],
        configuration: ChatConfiguration = ChatConfiguration(), logger: Logger, clock: ChatClock = .system
    ) {
        self.state = state
        self.store = store
        self.transport = transport
        self.secret = secret
        self.configuration = configuration
        self.logger = logger
        self.clock = clock
        signupRate = KeyedRateLimiter(
            rate: Double(configuration.signupsPerHour) / 3600, burst: Double(configuration.signupsPerHour))
        groupRate = KeyedRateLimiter(
            rate: Double(configuration.groupsPerHour) / 3600, burst: Double(configuration.groupsPerHour))
        userSendRate = KeyedRateLimiter(
            rate: Double(configuration.userMessagesPerSecond), burst: 2 * Double(configuration.userMessagesPerSecond))
        uploadRate = KeyedRateLimiter(
            rate: Double(configuration.uploadsPerMinute) / 60, burst: Double(configuration.uploadsPerMinute))
        updateRetention()
    }

    /// The fields of a stored message that the store indexes for `clientId` idempotency:
    /// give them to `Store.open`.
    public static var idempotencyFields: IdempotencyFields { IdempotencyFields(owner: "user", key: "clientId") }

    // MARK: Connections

    /// A connection opened on `/ws` from `address`; a valid `token` from the URL signs it in
    /// at once. An invalid one leaves it signed out (it may still `auth`, `login` or `signup`).
    public func opened(_ client: Client, token: String?, address: String = "unknown") {
        let session = ChatSession(client: client, address: address, rate: RateLimiter(rate: configuration.messagesPerSecond, now: clock.monotonicNanoseconds()))
        sessions[ObjectIdentifier(client)] = session
        if let token, let claims = validSession(token) {
            attach(session, claims)
        }
    }

    /// A text message from `client`.
    public func received(_ client: Client, text: [UInt8]) {
        guard let session = sessions[ObjectIdentifier(client)] else { return }
        let arrival = clock.monotonicNanoseconds()
        let decision = session.rate.admit(now: arrival)
        if decision == .close { return closeForFlooding(session) }
        var request: ChatRequest
        do throws(ChatError) {
            let limits = JSONLimits(maxDepth: 32, maxBytes: configuration.maxRequestBytes)
            let spans: [JSONParser.MemberSpan]?
            let members: [JSONParser.Member]?
            do {
                // Where the members lie, checked whole; parsed into values only when the spans
                // cannot stand for them (`JSONParser.parseDocumentSpans()`).
                spans = try JSONValue.parseMemberSpans(text, limits: limits)
                members = spans == nil ? try JSONValue.parseMembers(text, limits: limits) : nil
            } catch {
                if case .tooLarge = error.reason {
                    throw ChatError(.tooLarge, "a request may be at most \(configuration.maxRequestBytes) bytes")
                }
                throw ChatError(.badRequest, "a request must be one JSON object: \(error)")
            }
            if let spans {
                request = try ChatRequest(text, spans: spans)
            } else if let members {
                request = try ChatRequest(members)
            } else {
                throw ChatError(.badRequest, "a request must be one JSON object such as {\"op\":\"ping\"}")
            }
        } catch {
            badFrame(session, error, closeCode: 1007)
            return
        }
        request.arrival = arrival
        // Parsed even when over the limit, so the refusal carries the request's id.
        if decision == .reject { return fail(session, request.id, rateLimited) }
        do throws(ChatError) {
            try perform(request, session)
        } catch {
            fail(session, request.id, error)
        }
    }

    /// A binary message from `client`: the protocol is JSON text only.
    public func receivedBinary(_ client: Client) {
        guard let session = sessions[ObjectIdentifier(client)] else { return }
        switch session.rate.admit(now: clock.monotonicNanoseconds()) {
        case .allow: break
        case .reject: return fail(session, nil, rateLimited)
        case .close: return closeForFlooding(session)
        }
        badFrame(session, ChatError(.badRequest, "send JSON in text frames; binary frames are not understood"), closeCode: 1003)
    }

    /// The connection is gone (any way): it leaves every group's presence at once.
    public func closed(_ client: Client) {
        guard let session = sessions.removeValue(forKey: ObjectIdentifier(client)) else { return }
        session.isOpen = false
        detach(session)
    }

    private var rateLimited: ChatError {
        ChatError(.rateLimited, "too many requests: at most \(configuration.messagesPerSecond) a second; slow down")
    }

    private func closeForFlooding(_ session: ChatSession<Client>) {
        transport.close(session.client, code: 1008, reason: "rate limit exceeded")
    }

    private func badFrame(_ session: ChatSession<Client>, _ error: ChatError, closeCode: UInt16) {
        session.badFrames += 1
        if session.badFrames >= configuration.maxBadFrames {
            transport.close(session.client, code: closeCode, reason: "too many malformed requests")
        } else {
            fail(session, nil, error)
        }
    }

    private func perform(_ request: ChatRequest, _ session: ChatSession<Client>) throws(ChatError) {
        // A switch over strings compares case by case: the most frequent request, a signed-in
        // `send` while changes are accepted, goes straight through; the rest, errors included,
        // take the switches below.
        if request.op == "send", acceptsChanges, let uid = session.userID { return try send(request, session, uid) }
        switch request.op {
        case "ping":
            var writer = JSONWriter(op: "pong", answering: request.id)
            transport.send(writer.finished(), to: session.client)
            return
        case "signup":
            guard !secret.isEmpty, acceptsChanges else { throw ChatError.clusterUnavailable }
            return try signup(request, session)
        case "login":
            guard !secret.isEmpty else { throw ChatError.clusterUnavailable }
            return try login(request, session)
        case "auth":
            guard !secret.isEmpty else { throw ChatError.clusterUnavailable }
            return try authenticate(request, session)
        default: break
        }
        if !acceptsChanges, changingOps.contains(request.op) { throw ChatError.clusterUnavailable }
        guard let uid = session.userID else { throw ChatError.notSignedIn }
        switch request.op {
        case "logout": try logout(request, session, uid)
        case "users": listUsers(request, session)
        case "profile": try profile(request, session, uid)
        case "groups": listGroups(request, session, uid)
        case "create": try create(request, session, uid)
        case "invite": try invite(request, session, uid)
        case "join": try join(request, session, uid)
        case "leave": try leave(request, session, uid)
        case "direct": try direct(request, session, uid)
        case "subscribe": try subscribe(request, session, uid)
        case "unsubscribe": try unsubscribe(request, session, uid)
        case "history": try history(request, session, uid)
        case "receipt": try receipt(request, session, uid)
        case "typing": try typing(request, session, uid)
        default:
            throw ChatError(.badRequest, "unknown op `\(request.op)`; see docs/protocol.md, \"Operations\", for the list")
        }
    }

    // MARK: Replies

    /// Sends `{"op":"ok","id":...}` plus the fields `fill` writes.
    func reply(_ session: ChatSession<Client>, _ request: ChatRequest, _ fill: (inout JSONWriter) -> Void = { _ in }) {
        guard session.isOpen else { return }
        var writer = JSONWriter(op: "ok", answering: request.id)
        fill(&writer)
        transport.send(writer.finished(), to: session.client)
    }

    /// Sends an error reply.
    func fail(_ session: ChatSession<Client>, _ id: JSONValue?, _ error: ChatError) {
        guard session.isOpen else { return }
        var writer = JSONWriter(op: "error", answering: id)
        writer.string("code", error.code.rawValue)
        writer.string("message", error.message)
        transport.send(writer.finished(), to: session.client)
    }

    /// Sends an event to every subscriber of `group` except `except`; `arrival` is set for a
    /// `message` event (when its request arrived), so the server can measure delivery.
    func broadcast(_ json: [UInt8], group: String, except: Client? = nil, arrival: UInt64? = nil) {
        let members = subscribers.members(of: group)
        guard !members.isEmpty else { return }
        transport.broadcast(json, to: members, except: except, arrival: arrival)
    }

    /// Whether a connection other than `client` is subscribed to `group`: an event nobody
    /// would get is not worth writing.
    func hasSubscribers(_ group: String, besides client: Client) -> Bool {
        subscribers.hasMember(in: group, besides: client)
    }

    /// The group `gid` when `uid` is a member; `not_found` or `forbidden` otherwise.
    func memberGroup(_ gid: String, _ uid: String) throws(ChatError) -> ChatGroup {
        state.groups.values[try memberIndex(gid, uid)]
    }

    /// `memberGroup`'s checks without copying the group.
    func requireMember(_ gid: String, _ uid: String) throws(ChatError) {
        _ = try memberIndex(gid, uid)
    }

    private func memberIndex(_ gid: String, _ uid: String) throws(ChatError) -> [String: ChatGroup].Index {
        guard let index = state.groups.index(forKey: gid) else { throw ChatError.noSuchGroup }
        // In place: the values' getter copies the whole group (five references retained and
        // released) to look at one set, on every send.
        guard Self.contains(uid, &state.groups.values[index].members) else { throw ChatError.notMember }
        return index
    }

    private static func contains(_ uid: String, _ members: inout Set<String>) -> Bool {
        members.contains(uid)
    }
}

/// The operations that change the stored state: refused while `acceptsChanges` is false.
private let changingOps: Set<String> = ["logout", "profile", "create", "join", "leave", "direct", "send", "receipt"]
