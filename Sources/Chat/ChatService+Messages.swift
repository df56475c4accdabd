import JSON
import Store

/// `subscribe`, `unsubscribe`, `send`, `history`, `receipt`, `typing`.
extension ChatService {
    func subscribe(_ request: ChatRequest, _ session: ChatSession<Client>, _ uid: String) throws(ChatError) {
        let gid = try request.required("group")
        let group = try memberGroup(gid, uid)
        let since = try request.string("since")
        let limit = try request.limit()
        addSubscription(session, gid, uid)
        let (page, more) = (state.messages[gid] ?? MessageLog()).page(after: since, before: nil, limit: limit)
        let users = onlineUsers(in: gid)
        reply(session, request) { writer in
            writer.object("group") { group.write(into: &$0, id: gid, online: users) }
            writer.objects("messages", page) { $1.write(into: &$0, group: gid) }
            writer.bool("more", more)
        }
    }

    func unsubscribe(_ request: ChatRequest, _ session: ChatSession<Client>, _ uid: String) throws(ChatError) {
        let gid = try request.required("group")
        _ = try memberGroup(gid, uid)
        if session.subscriptions.remove(gid) != nil { removeSubscription(session, gid, uid) }
        reply(session, request)
    }

    func send(_ request: ChatRequest, _ session: ChatSession<Client>, _ uid: String) throws(ChatError) {
        let gid = try request.required("group")
        _ = try memberGroup(gid, uid)
        guard userSendRate.admit(uid, now: clock.monotonicNanoseconds()) else {
            throw ChatError(.rateLimited,
                            "too many messages: at most \(configuration.userMessagesPerSecond) a second per user, across connections")
        }
        let text = try request.string("text")
        let imageUrl = try Self.validURL(request.string("imageUrl"), what: "imageUrl")
        guard (text == nil) != (imageUrl == nil) else {
            throw ChatError(.badRequest, "send exactly one of `text` and `imageUrl`")
        }
        if let text {
            guard !text.isEmpty else { throw ChatError(.badRequest, "`text` must not be empty") }
            guard text.utf8.count <= configuration.maxTextBytes else {
                throw ChatError(.tooLarge, "a message may be at most \(configuration.maxTextBytes) bytes; split it")
            }
        }
        let clientId = try request.string("clientId")
        if let clientId, clientId.utf8.count > 128 {
            throw ChatError(.badRequest, "`clientId` must be at most 128 bytes")
        }
        if let clientId, try resend(request, session, uid, gid, clientId) { return }
        let now = clock.milliseconds()
        let message = ChatMessage(
            id: ids.next(milliseconds: now), user: uid, text: text, imageUrl: imageUrl, createdAt: now, clientId: clientId)
        // The journal line is written straight from the message: the same bytes as
        // `Mutation.set(path: ["Messages", gid, id], value: message.treeValue)` without the
        // dictionary and the sorting of its keys.
        let ticket = store.append(mutationCount: 1) { message.appendJournalLine(group: gid, to: &$0) }
        committed(ticket, message: (gid, message)) { [self] succeeded in
            guard succeeded else { return fail(session, request.id, .storeFailed) }
            var object = JSONWriter()
            message.write(into: &object, group: gid)
            let messageJSON = object.finished()
            reply(session, request) { $0.raw("message", messageJSON) }
            // The event is the same moment as the ack: nobody sees a message that is not durable.
            var event = JSONWriter(op: "message")
            event.string("group", gid)
            event.raw("message", messageJSON)
            broadcast(event.finished(), group: gid, except: session.client)
        }
    }

    /// Answers a `send` whose sender already sent `clientId`, and returns true; false when
    /// the `clientId` is new.
    ///
    /// A stored message is answered at once; one still on its way to the disk is answered when
    /// it gets there, like the first `send`. Either way nothing is written and no event goes
    /// out: the first `send` did both.
    private func resend(
        _ request: ChatRequest, _ session: ChatSession<Client>, _ uid: String, _ gid: String, _ clientId: String
    ) throws(ChatError) -> Bool {
        if let (group, message) = state.message(sentBy: uid, clientId: clientId) {
            try Self.checkSameGroup(group, gid)
            replyMessage(session, request, message, group: group)
            return true
        }
        guard let pending = pendingByClient[ClientMessageKey(user: uid, clientId: clientId)] else { return false }
        try Self.checkSameGroup(pending.group, gid)
        committed(pending.ticket) { [self] succeeded in
            guard succeeded else { return fail(session, request.id, .storeFailed) }
            replyMessage(session, request, pending.message, group: pending.group)
        }
        return true
    }

    private static func checkSameGroup(_ stored: String, _ requested: String) throws(ChatError) {
        guard stored == requested else {
            throw ChatError(.conflict, "this `clientId` was already used for a message in another group; choose a new one")
        }
    }

    private func replyMessage(_ session: ChatSession<Client>, _ request: ChatRequest, _ message: ChatMessage, group: String) {
        var object = JSONWriter()
        message.write(into: &object, group: group)
        let messageJSON = object.finished()
        reply(session, request) { $0.raw("message", messageJSON) }
    }

    func history(_ request: ChatRequest, _ session: ChatSession<Client>, _ uid: String) throws(ChatError) {
        let gid = try request.required("group")
        _ = try memberGroup(gid, uid)
        let before = try request.string("before")
        let after = try request.string("after")
        guard before == nil || after == nil else {
            throw ChatError(.badRequest, "give `before` or `after`, not both")
        }
        let limit = try request.limit()
        let (page, more) = (state.messages[gid] ?? MessageLog()).page(after: after, before: before, limit: limit)
        reply(session, request) { writer in
            writer.objects("messages", page) { $1.write(into: &$0, group: gid) }
            writer.bool("more", more)
        }
    }

    func receipt(_ request: ChatRequest, _ session: ChatSession<Client>, _ uid: String) throws(ChatError) {
        let gid = try request.required("group")
        _ = try memberGroup(gid, uid)
        let mid = try request.required("message")
        guard let index = state.messages[gid]?.index(of: mid) else {
            throw ChatError(.notFound, "no such message in this group")
        }
        let now = clock.milliseconds()
        state.messages[gid]?.setReceipt(at: index, user: uid, time: now)
        commit([.set(path: ["Messages", gid, mid, "receivedBy", uid], value: .integer(now))]) { [self] succeeded in
            guard succeeded else { return fail(session, request.id, .storeFailed) }
            reply(session, request)
            var event = JSONWriter(op: "receipt")
            event.string("group", gid)
            event.string("message", mid)
            event.string("user", uid)
            event.integer("at", now)
            broadcast(event.finished(), group: gid)
        }
    }

    func typing(_ request: ChatRequest, _ session: ChatSession<Client>, _ uid: String) throws(ChatError) {
        let gid = try request.required("group")
        _ = try memberGroup(gid, uid)
        reply(session, request)
        var event = JSONWriter(op: "typing")
        event.string("group", gid)
        event.string("user", uid)
        broadcast(event.finished(), group: gid, except: session.client)
    }
}
