import Bytes
import JSON
import Store
import Crypto

/// `groups`, `create`, `invite`, `join`, `leave`, `direct`.
extension ChatService {
    func listGroups(_ request: ChatRequest, _ session: ChatSession<Client>, _ uid: String) {
        let mine = (state.users[uid]?.groups ?? []).compactMap { gid in
            state.groups[gid].map { (gid, $0, state.lastActivity(of: gid)) }
        }
        let sorted = mine.sorted { $0.2 > $1.2 }
        reply(session, request) { writer in
            writer.objects("groups", sorted) { nested, entry in
                let (gid, group, _) = entry
                nested.string("id", gid)
                nested.string("name", group.name)
                nested.integer("members", group.members.count)
                nested.integer("online", onlineCount(in: gid))
                if let last = state.messages[gid]?.last {
                    nested.object("lastMessage") { last.write(into: &$0, group: gid) }
                } else {
                    nested.key("lastMessage")
                    nested.null()
                }
            }
        }
    }

    /// Replies `{"group": Group}` for a member.
    func replyGroup(_ session: ChatSession<Client>, _ request: ChatRequest, _ gid: String) {
        guard let group = state.groups[gid] else { return }
        let users = onlineUsers(in: gid)
        reply(session, request) { writer in
            writer.object("group") { group.write(into: &$0, id: gid, online: users) }
        }
    }

    func create(_ request: ChatRequest, _ session: ChatSession<Client>, _ uid: String) throws(ChatError) {
        let name = try Self.validName(request.required("name"), what: "group name")
        guard groupRate.admit(uid, now: clock.monotonicNanoseconds()) else {
            let wait = groupRate.secondsUntilToken(uid, now: clock.monotonicNanoseconds())
            throw ChatError(.rateLimited, "too many new groups; try again in \(wait) seconds")
        }
        let now = clock.milliseconds()
        let gid = ids.next(milliseconds: now)
        let group = ChatGroup(name: name, createdBy: uid, createdAt: now, invite: newInviteCode(), members: [uid])
        addGroup(gid, group)
        commit([.set(path: ["Groups", gid], value: group.treeValue(online: nil)), membership(uid, gid, true)]) { [self] succeeded in
            guard succeeded else { return fail(session, request.id, .storeFailed) }
            replyGroup(session, request, gid)
        }
    }

    func invite(_ request: ChatRequest, _ session: ChatSession<Client>, _ uid: String) throws(ChatError) {
        let group = try memberGroup(request.required("group"), uid)
        guard let code = group.invite else {
            throw ChatError(.forbidden, "a direct conversation cannot be shared; create a group instead")
        }
        reply(session, request) { writer in
            writer.string("invite", code)
            writer.string("url", "/join/" + code)
        }
    }

    func join(_ request: ChatRequest, _ session: ChatSession<Client>, _ uid: String) throws(ChatError) {
        var code = try request.required("invite")
        // Accept a pasted link as well as the bare code.
        if let slash = code.lastIndex(of: "/") { code = String(code[code.index(after: slash)...]) }
        guard let gid = state.invites[code], state.groups[gid] != nil else {
            throw ChatError(.notFound, "no group has this invite code; ask a member for a new link")
        }
        if state.groups[gid]?.members.contains(uid) == true { return replyGroup(session, request, gid) }
        state.groups[gid]?.members.insert(uid)
        state.users[uid]?.groups.insert(gid)
        commit(memberships(uid, gid, true)) { [self] succeeded in
            guard succeeded else { return fail(session, request.id, .storeFailed) }
            replyGroup(session, request, gid)
            broadcast(memberEvent(gid, uid, "joined"), group: gid)
        }
    }

    func leave(_ request: ChatRequest, _ session: ChatSession<Client>, _ uid: String) throws(ChatError) {
        let gid = try request.required("group")
        try requireMember(gid, uid)
        state.groups[gid]?.members.remove(uid)
        state.users[uid]?.groups.remove(gid)
        unsubscribeUser(uid, from: gid)
        commit(memberships(uid, gid, false)) { [self] succeeded in
            guard succeeded else { return fail(session, request.id, .storeFailed) }
            reply(session, request)
            broadcast(memberEvent(gid, uid, "left"), group: gid)
        }
    }

    func direct(_ request: ChatRequest, _ session: ChatSession<Client>, _ uid: String) throws(ChatError) {
        let other = try request.required("user")
        guard other != uid else {
            throw ChatError(.badRequest, "you cannot start a direct conversation with yourself")
        }
        guard let otherUser = state.users[other], let me = state.users[uid] else {
            throw ChatError(.notFound, "no such user")
        }
        let key = ChatState.directKey(uid, other)
        var mutations: [Mutation] = []
        let gid: String
        if let existing = state.directs[key], let group = state.groups[existing] {
            gid = existing
            // Someone who left a direct conversation is back in it when either side resumes it.
            for member in [uid, other] where !group.members.contains(member) {
                state.groups[gid]?.members.insert(member)
                state.users[member]?.groups.insert(gid)
                mutations += memberships(member, gid, true)
            }
            if mutations.isEmpty { return replyGroup(session, request, gid) }
        } else {
            let now = clock.milliseconds()
            gid = ids.next(milliseconds: now)
            let group = ChatGroup(
                name: "\(me.name) & \(otherUser.name)", createdBy: uid, createdAt: now, invite: nil,
                members: [uid, other], direct: key)
            addGroup(gid, group)
            state.users[other]?.groups.insert(gid)
            mutations = [.set(path: ["Groups", gid], value: group.treeValue(online: nil)),
                         membership(uid, gid, true), membership(other, gid, true)]
        }
        commit(mutations) { [self] succeeded in
            guard succeeded else { return fail(session, request.id, .storeFailed) }
            replyGroup(session, request, gid)
        }
    }

    // MARK: Helpers

    /// Adds a new group to the state and its indexes, with its creator as member.
    private func addGroup(_ gid: String, _ group: ChatGroup) {
        state.groups[gid] = group
        state.users[group.createdBy]?.groups.insert(gid)
        if let invite = group.invite { state.invites[invite] = gid }
        if let direct = group.direct { state.directs[direct] = gid }
    }

    /// `Users/<uid>/groupList/<gid>` set or deleted.
    private func membership(_ uid: String, _ gid: String, _ isMember: Bool) -> Mutation {
        isMember ? .set(path: ["Users", uid, "groupList", gid], value: true) : .delete(path: ["Users", uid, "groupList", gid])
    }

    /// Both sides of a membership: the group's `userList` and the user's `groupList`.
    private func memberships(_ uid: String, _ gid: String, _ isMember: Bool) -> [Mutation] {
        let list: Mutation = isMember
            ? .set(path: ["Groups", gid, "userList", uid], value: true)
            : .delete(path: ["Groups", gid, "userList", uid])
        return [list, membership(uid, gid, isMember)]
    }

    func memberEvent(_ gid: String, _ uid: String, _ action: StaticString) -> [UInt8] {
        var writer = JSONWriter(op: "member")
        writer.string("group", gid)
        writer.string("user", uid)
        writer.string("action", action)
        return writer.finished()
    }

    /// 12 random bytes as 16 base64url characters: unguessable, and safe in a URL.
    private func newInviteCode() -> String {
        Base64.encode(Crypto.randomBytes(12), .url)
    }
}
