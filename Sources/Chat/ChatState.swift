/// Everything the chat service stores, as typed values: users, credentials, groups, messages,
/// and the records of uploaded media.
///
/// Messages are each group's newest ones (`MessageLog`); older ones are read from the store.
/// The indexes (`emails`, `invites`, `directs`, `sentByClient`) are derived on load and kept in
/// step by the service; they are never persisted. Live state (who is online) is not here at all.
public struct ChatState: Sendable, Equatable {
    public var users: [String: ChatUser] = [:]
    public var auth: [String: ChatAuth] = [:]
    public var groups: [String: ChatGroup] = [:]
    public var messages: [String: MessageLog] = [:]
    /// Uploaded files by id (`Media/<id>`).
    public var media: [String: MediaRecord] = [:]

    /// Lower-cased email to user id.
    public var emails: [String: String] = [:]
    /// Invite code to group id.
    public var invites: [String: String] = [:]
    /// Direct pair key (`<smaller uid>:<larger uid>`) to group id.
    public var directs: [String: String] = [:]
    /// Every message in memory that came with a `clientId`, by sender and `clientId`: what makes
    /// a resent `send` answer with the message it already stored (docs/protocol.md, "Sending
    /// exactly once"). Those only on disk are found through the store's idempotency index.
    public var sentByClient: [ClientMessageKey: MessageReference] = [:]
    /// Bytes of media each user has stored, against the per-user quota.
    public var mediaUsage: [String: Int] = [:]

    public init() {}

    /// Rebuilds the indexes from the records.
    mutating func rebuildIndexes() {
        emails.removeAll(keepingCapacity: true)
        invites.removeAll(keepingCapacity: true)
        directs.removeAll(keepingCapacity: true)
        sentByClient.removeAll(keepingCapacity: true)
        mediaUsage.removeAll(keepingCapacity: true)
        for (_, record) in media { mediaUsage[record.owner, default: 0] += record.bytes }
        for (uid, record) in auth { emails[record.email] = uid }
        for (gid, group) in groups {
            if let invite = group.invite { invites[invite] = gid }
            if let direct = group.direct { directs[direct] = gid }
        }
        for (gid, log) in messages {
            for message in log.messages { noteClientId(of: message, group: gid) }
        }
    }

    /// Indexes `message` by its sender and `clientId`, when it has one.
    mutating func noteClientId(of message: ChatMessage, group: String) {
        guard let clientId = message.clientId else { return }
        sentByClient[ClientMessageKey(user: message.user, clientId: clientId)] = MessageReference(group: group, id: message.id)
    }

    /// Forgets the `clientId` of `message`, which left memory.
    mutating func forgetClientId(of message: ChatMessage) {
        guard let clientId = message.clientId else { return }
        let key = ClientMessageKey(user: message.user, clientId: clientId)
        if sentByClient[key]?.id == message.id { sentByClient[key] = nil }
    }

    /// The message in memory that `user` sent with `clientId`, and its group.
    func message(sentBy user: String, clientId: String) -> (group: String, message: ChatMessage)? {
        guard let reference = sentByClient[ClientMessageKey(user: user, clientId: clientId)],
            let log = messages[reference.group], let index = log.index(of: reference.id)
        else { return nil }
        return (reference.group, log.messages[index])
    }

    /// The key of the direct group of two users, the same whichever order they come in.
    static func directKey(_ a: String, _ b: String) -> String {
        a < b ? "\(a):\(b)" : "\(b):\(a)"
    }

    /// A group's latest activity, as a key that orders by time and then by id: its last message,
    /// else its creation. Push ids from one server increase strictly, also within a millisecond,
    /// so two groups touched in the same millisecond still come out in the order they were.
    func lastActivity(of gid: String) -> (time: Int64, id: String) {
        if let message = messages[gid]?.last { return (message.createdAt, message.id) }
        return (groups[gid]?.createdAt ?? 0, gid)
    }

    /// Total stored messages, in memory and on disk (for the start-up log line and metrics).
    public var messageCount: Int {
        messages.values.reduce(0) { $0 + $1.total }
    }

    /// Whether the session `sid` of `uid` was revoked.
    func isRevoked(uid: String, sid: String) -> Bool {
        auth[uid]?.revoked[sid] != nil
    }
}

/// A sender and the `clientId` it chose for one message.
public struct ClientMessageKey: Hashable, Sendable {
    public var user: String
    public var clientId: String
}

/// Where a stored message is: its group and its id.
public struct MessageReference: Equatable, Sendable {
    public var group: String
    public var id: String
}
