import JSON
import Store

/// Cluster mode (docs/cluster.md, "One history"): changes read from the cluster's journal that
/// this node did not make, applied to its store and state, with the events they carry.
extension ChatService {
    /// Applies `lines`, journal lines from the cluster's journal: appended to the local store as
    /// they are, applied to the state, and their events sent to this node's subscribers
    /// (`message`, `receipt`, `member`). Returns false, changing nothing, when a line is not a
    /// mutation.
    public func applyReplica(_ lines: [UInt8]) -> Bool {
        let parsed: Result<[Mutation], any Error> = lines.withUnsafeBytes { raw in
            Result {
                var mutations: [Mutation] = []
                var start = 0
                while start < raw.count {
                    let end = raw[start...].firstIndex(of: 10) ?? raw.count
                    let value = try JSONValue.parse(UnsafeRawBufferPointer(rebasing: raw[start..<end]), limits: .trustedFile)
                    mutations.append(try Mutation(journalLine: value))
                    start = end + 1
                }
                return mutations
            }
        }
        let mutations: [Mutation]
        switch parsed {
        case .success(let all): mutations = all
        case .failure(let error):
            logger.error("a change from the cluster's journal is not a mutation", metadata: ["error": "\(error)"])
            return false
        }
        guard !mutations.isEmpty else { return true }
        let ticket = store.append(replica: lines.last == 10 ? lines : lines + [10], mutationCount: mutations.count)
        for mutation in mutations { applyReplicated(mutation, ticket: ticket) }
        return true
    }

    private func applyReplicated(_ mutation: Mutation, ticket: UInt64) {
        let path = mutation.path
        if path.first == "Messages" { return applyMessageChange(mutation, ticket: ticket) }
        if path.count == 4, path[0] == "Auth", path[2] == "revoked", case .set(_, let expiry) = mutation, !expiry.isNull {
            // A logout on another node: the connections here that signed in with that token
            // are signed out with it, as on the node that revoked it.
            _ = state.applyToRecord(mutation)
            for session in userSessions[path[1]]?.values.filter({ $0.sessionID == path[3] }) ?? [] { detach(session) }
            return
        }
        guard path.count == 4, path[0] == "Groups", path[2] == "userList" else {
            _ = state.applyToRecord(mutation)
            return
        }
        let (gid, uid) = (path[1], path[3])
        let wasMember = state.groups[gid]?.members.contains(uid) == true
        _ = state.applyToRecord(mutation)
        let isMember = state.groups[gid]?.members.contains(uid) == true
        guard wasMember != isMember else { return }
        if !isMember { unsubscribeUser(uid, from: gid) }
        broadcast(memberEvent(gid, uid, isMember ? "joined" : "left"), group: gid)
    }

    /// A message stored, taken back or received (the only changes a node makes under
    /// `Messages`).
    private func applyMessageChange(_ mutation: Mutation, ticket: UInt64) {
        let path = mutation.path
        guard path.count >= 3 else { return }
        let (gid, mid) = (path[1], path[2])
        switch mutation {
        case .set(_, let value) where path.count == 3 && !value.isNull:
            guard let message = ChatState.message(id: mid, value, users: state.users) else { return }
            // Older than every message in memory while older ones lie on disk: one this node
            // has (a snapshot or a journal read again over its history). The store has the
            // line; memory keeps only the newest, and nobody hears of it again.
            if let log = state.messages[gid], log.olderOnDisk > 0, let first = log.messages.first?.id, mid < first { return }
            let isNew = state.messages[gid]?.index(of: mid) == nil
            state.messages[gid, default: MessageLog()].insert(message, ticket: ticket)
            state.noteClientId(of: message, group: gid)
            if isNew { broadcast(Self.messageEvent(gid, Self.json(message, group: gid)), group: gid) }
        case .set where path.count == 3, .delete where path.count == 3:
            guard let index = state.messages[gid]?.index(of: mid), let message = state.messages[gid]?.messages[index] else { return }
            state.forgetClientId(of: message)
            state.messages[gid]?.remove(id: mid)
        case .set(_, let value) where path.count == 5 && path[3] == "receivedBy":
            guard let at = value.int64Value else { return }
            let uid = path[4]
            if let index = state.messages[gid]?.index(of: mid) {
                state.messages[gid]?.setReceipt(at: index, user: uid, time: at, ticket: ticket)
            } else {
                state.messages[gid]?.setDetachedReceipt(mid, user: uid, time: at, ticket: ticket)
            }
            broadcast(Self.receiptEvent(gid, mid, uid, at), group: gid)
        default:
            logger.debug("a change from the cluster's journal left as it is", metadata: ["path": "\(path)"])
        }
    }
}
