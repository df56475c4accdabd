import JSON
import Store

/// Who is online: signed-in connections per user, subscribed connections per group, and the
/// folded `presence` diffs.
extension ChatService {
    /// Signs `session` in as the token's user (after signing out whoever it was before).
    func attach(_ session: ChatSession<Client>, _ token: SessionToken) {
        if session.userID != nil { detach(session) }
        session.userID = token.userID
        session.sessionID = token.sessionID
        session.tokenExpiry = token.expiresAt
        nextTokenExpiry = min(nextTokenExpiry, token.expiresAt)
        userSessions[token.userID, default: [:]][ObjectIdentifier(session.client)] = session
    }

    /// Signs out every connection whose token has expired, as `logout` signs out the
    /// connections of a revoked token: a connection stays open for as long as its client keeps
    /// it, and its token must not outlive the `tokenLifetime` it was given. The server calls it
    /// with `flushPresence`, so the `presence` diffs of such a sign-out go out with that flush.
    public func signOutExpired() {
        let now = clock.seconds
        guard now >= nextTokenExpiry else { return }
        var next = Int64.max
        var expired: [ChatSession<Client>] = []
        for sessions in userSessions.values {
            for session in sessions.values {
                if session.tokenExpiry <= now { expired.append(session) } else { next = min(next, session.tokenExpiry) }
            }
        }
        for session in expired { detach(session) }
        nextTokenExpiry = next
    }

    /// Signs `session` out: it leaves every group it was subscribed to.
    func detach(_ session: ChatSession<Client>) {
        guard let uid = session.userID else { return }
        for gid in session.subscriptions { removeSubscription(session, gid, uid) }
        session.subscriptions.removeAll()
        session.userID = nil
        session.sessionID = nil
        let key = ObjectIdentifier(session.client)
        userSessions[uid]?.removeValue(forKey: key)
        if userSessions[uid]?.isEmpty == true { userSessions.removeValue(forKey: uid) }
    }

    /// Subscribes `session` to `gid`'s live events; the user comes online there if it was not.
    func addSubscription(_ session: ChatSession<Client>, _ gid: String, _ uid: String) {
        guard session.subscriptions.insert(gid).inserted else { return }
        subscribers.join(gid, session.client)
        let count = online[gid]?[uid] ?? 0
        if count == 0 {
            notePresence(gid, uid, wasOnline: remoteOnline[gid]?[uid] != nil)
            onLocalPresence?(gid, uid, true)
        }
        online[gid, default: [:]][uid] = count + 1
    }

    /// The reverse of `addSubscription`; the caller updates `session.subscriptions`.
    func removeSubscription(_ session: ChatSession<Client>, _ gid: String, _ uid: String) {
        subscribers.leave(gid, session.client)
        let count = online[gid]?[uid] ?? 0
        if count <= 1 {
            online[gid]?.removeValue(forKey: uid)
            if online[gid]?.isEmpty == true { online.removeValue(forKey: gid) }
            if count == 1 {
                notePresence(gid, uid, wasOnline: true)
                onLocalPresence?(gid, uid, false)
            }
        } else {
            online[gid]?[uid] = count - 1
        }
    }

    /// Unsubscribes every connection of `uid` from `gid` (after `leave`).
    func unsubscribeUser(_ uid: String, from gid: String) {
        guard let connections = userSessions[uid] else { return }
        for session in connections.values where session.subscriptions.remove(gid) != nil {
            removeSubscription(session, gid, uid)
        }
    }

    /// Records the state before the first change of this window; later changes keep it.
    private func notePresence(_ gid: String, _ uid: String, wasOnline: Bool) {
        if presenceChanges[gid]?[uid] == nil {
            presenceChanges[gid, default: [:]][uid] = wasOnline
        }
    }

    /// The users online in `gid` (on this node or, in cluster mode, on another), sorted.
    public func onlineUsers(in gid: String) -> [String] {
        guard let remote = remoteOnline[gid] else { return (online[gid]?.keys).map { $0.sorted() } ?? [] }
        return Set(remote.keys).union(online[gid]?.keys ?? [:].keys).sorted()
    }

    /// How many users are online in `gid`.
    func onlineCount(in gid: String) -> Int {
        let local = online[gid] ?? [:]
        guard let remote = remoteOnline[gid] else { return local.count }
        return local.count + remote.keys.count { local[$0] == nil }
    }

    /// Every group and user online in it on this node (cluster mode: this node's share).
    public var localPresence: [(group: String, user: String)] {
        online.flatMap { gid, users in users.keys.map { (gid, $0) } }
    }

    /// Cluster mode: `uid` came online in `gid` on one more node (`joined`) or is no longer
    /// online on one of them.
    public func remotePresence(_ gid: String, _ uid: String, joined: Bool) {
        let before = remoteOnline[gid]?[uid] ?? 0
        setRemote(gid, uid, max(0, before + (joined ? 1 : -1)))
    }

    /// Cluster mode: the users online in each group on other nodes are now `target` (after
    /// the node's view of the cluster was made again), with the differences as presence changes.
    public func replaceRemotePresence(_ target: [String: [String: Int]]) {
        for gid in Set(target.keys).union(remoteOnline.keys) {
            let want = target[gid] ?? [:]
            for uid in Set(want.keys).union(remoteOnline[gid]?.keys ?? [:].keys) { setRemote(gid, uid, want[uid] ?? 0) }
        }
    }

    private func setRemote(_ gid: String, _ uid: String, _ nodes: Int) {
        let before = remoteOnline[gid]?[uid] ?? 0
        guard nodes != before else { return }
        notePresence(gid, uid, wasOnline: before > 0 || online[gid]?[uid] != nil)
        if nodes > 0 {
            remoteOnline[gid, default: [:]][uid] = nodes
        } else {
            remoteOnline[gid]?.removeValue(forKey: uid)
            if remoteOnline[gid]?.isEmpty == true { remoteOnline.removeValue(forKey: gid) }
        }
    }

    /// Whether `uid` has any signed-in connection.
    public func isOnline(_ uid: String) -> Bool {
        userSessions[uid] != nil
    }

    /// Sends one `presence` event per group whose online set changed since the last call:
    /// `{"op":"presence","group","online":n,"joined":[ids],"left":[ids]}`. The server calls it
    /// every 50 ms, so a burst of joins becomes one event and nobody waits more than that.
    public func flushPresence() {
        guard !presenceChanges.isEmpty else { return }
        let changes = presenceChanges
        presenceChanges.removeAll()
        for (gid, users) in changes {
            let current = online[gid] ?? [:]
            let remote = remoteOnline[gid] ?? [:]
            var joined: [String] = []
            var left: [String] = []
            for (uid, wasOnline) in users {
                let isOnline = current[uid] != nil || remote[uid] != nil
                if isOnline && !wasOnline { joined.append(uid) }
                if !isOnline && wasOnline { left.append(uid) }
            }
            guard !joined.isEmpty || !left.isEmpty else { continue }
            joined.sort()
            left.sort()
            var writer = JSONWriter(op: "presence")
            writer.string("group", gid)
            let count = onlineCount(in: gid)
            writer.integer("online", count)
            writer.strings("joined", joined)
            writer.strings("left", left)
            broadcast(writer.finished(), group: gid)
            onPresenceChange?(PresenceChange(
                place: .group(id: gid, name: state.groups[gid]?.name), online: count, joined: joined, left: left))
        }
    }

    /// `{"groups":[{"id","name","online":n,"users":[ids]}],"rooms":[{"name","online":n,"users":[names]}],
    /// "onlineUsers":n,"connections":n}` for `GET /api/v1/presence` and the presence stream:
    /// groups with someone online, busiest first, then the plain rooms the server passes in
    /// (`online` counts a room's connections, `users` its distinct display names).
    public func presenceSnapshot(rooms: [(name: String, online: Int, users: [String])]) -> [UInt8] {
        var writer = JSONWriter()
        let busy = Set(online.keys).union(remoteOnline.keys).map { ($0, onlineUsers(in: $0)) }
            .sorted { $0.1.count != $1.1.count ? $0.1.count > $1.1.count : $0.0 < $1.0 }
        writer.objects("groups", busy) { nested, entry in
            nested.string("id", entry.0)
            nested.string("name", state.groups[entry.0]?.name)
            nested.integer("online", entry.1.count)
            nested.strings("users", entry.1)
        }
        writer.objects("rooms", rooms) { nested, room in
            nested.string("name", room.name)
            nested.integer("online", room.online)
            nested.strings("users", room.users)
        }
        writer.integer("onlineUsers", userSessions.count)
        writer.integer("connections", sessions.count)
        return writer.finished()
    }

    /// Users with a signed-in connection.
    public var onlineUserCount: Int { userSessions.count }

    /// The read-only tree for the admin API, with the live `online` sets; `Auth` is never in it.
    ///
    /// Messages come from memory and the segments together, read on the calling thread: the
    /// tree API is for inspection by an operator, and reading a group's whole history there
    /// costs what that history weighs. A segment that cannot be read gives nil.
    public func subtree(_ path: [String]) -> JSONValue? {
        guard path.first != "Auth" else { return nil }
        var readFailed = false
        let value = state.subtree(path, online: { gid in onlineUsers(in: gid) }) { gid in
            do throws(StoreError) {
                return try allMessages(of: gid)
            } catch {
                logger.error("the tree API could not read the messages of \(gid): \(error)")
                readFailed = true
                return []
            }
        }
        return readFailed ? nil : value
    }

    /// Every message of group `gid`: the stored ones with memory's newer versions laid over.
    private func allMessages(of gid: String) throws(StoreError) -> [ChatMessage] {
        let log = state.messages[gid] ?? MessageLog()
        var byID: [String: ChatMessage] = [:]
        for record in try store.storedMessages(of: gid) {
            guard var message = ChatState.message(id: record.id, record.value, users: state.users) else { continue }
            if let receipts = log.detachedReceipts[record.id]?.receivedBy { message.receivedBy.merge(receipts) { $1 } }
            byID[record.id] = message
        }
        for message in log.messages { byID[message.id] = message }
        return byID.values.sorted { $0.id < $1.id }
    }
}
