import JSON
import Store

/// What a new message carries: exactly one of `text` and `imageUrl`, and the sender's optional
/// `clientId` (ChatService.messageContent(_:)).
typealias MessageContent = (text: String?, imageUrl: String?, clientId: String?)

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
        let content = try messageContent(request)
        if let clientId = content.clientId, try resent(uid, gid, clientId, answer: { [self] message in
            guard let message else { return fail(session, request.id, .storeFailed) }
            reply(session, request) { $0.raw("message", message) }
        }) { return }
        let message = newMessage(content, from: uid)
        // The journal line is written straight from the message: the same bytes as
        // `Mutation.set(path: ["Messages", gid, id], value: message.treeValue)` without the
        // dictionary and the sorting of its keys.
        let ticket = store.append(mutationCount: 1) { message.appendJournalLine(group: gid, to: &$0) }
        committed(ticket, message: (gid, message)) { [self] succeeded in
            guard succeeded else { return fail(session, request.id, .storeFailed) }
            let messageJSON = Self.json(message, group: gid)
            reply(session, request) { $0.raw("message", messageJSON) }
            // The event is the same moment as the ack: nobody sees a message that is not durable.
            var event = JSONWriter(op: "message")
            event.string("group", gid)
            event.raw("message", messageJSON)
            broadcast(event.finished(), group: gid, except: session.client, arrival: request.arrival)
            noteOfflineMembers(gid, sender: uid, messageJSON)
        }
    }

    /// Tells `onOfflineDelivery` which members of `gid`, other than `sender`, have no open
    /// connection to receive the message just stored.
    func noteOfflineMembers(_ gid: String, sender: String, _ messageJSON: [UInt8]) {
        guard let onOfflineDelivery, let group = state.groups[gid] else { return }
        let offline = group.members.filter { $0 != sender && !isOnline($0) }
        guard !offline.isEmpty else { return }
        onOfflineDelivery(OfflineDelivery(group: gid, groupName: group.name, message: messageJSON, users: offline.sorted()))
    }

    /// What a new message carries, checked: exactly one of `text` and `imageUrl`, and an
    /// optional `clientId` (a `send`, or the publish API's body).
    func messageContent(_ request: ChatRequest) throws(ChatError) -> MessageContent {
        let text = try request.string("text")
        let imageUrl = try validURL(request.string("imageUrl"), what: "imageUrl")
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
        return (text, imageUrl, clientId)
    }

    /// A message from `uid` with `content`, stamped now with a fresh id.
    func newMessage(_ content: MessageContent, from uid: String) -> ChatMessage {
        let now = clock.milliseconds()
        return ChatMessage(
            id: ids.next(milliseconds: now), user: uid, text: content.text, imageUrl: content.imageUrl, createdAt: now,
            clientId: content.clientId)
    }

    /// When `uid` already sent `clientId` into `gid`, calls `answer` with that message as JSON
    /// and returns true; false when the `clientId` is new.
    ///
    /// A stored message is answered at once; one still on its way to the disk is answered when
    /// it gets there (nil if the store fails), like the first `send`. Either way nothing is
    /// written and no event goes out: the first `send` did both.
    func resent(
        _ uid: String, _ gid: String, _ clientId: String, answer: @escaping ([UInt8]?) -> Void
    ) throws(ChatError) -> Bool {
        if let (group, message) = state.message(sentBy: uid, clientId: clientId) {
            try Self.checkSameGroup(group, gid)
            answer(Self.json(message, group: group))
            return true
        }
        guard let pending = pendingByClient[ClientMessageKey(user: uid, clientId: clientId)] else { return false }
        try Self.checkSameGroup(pending.group, gid)
        committed(pending.ticket) { succeeded in
            answer(succeeded ? Self.json(pending.message, group: pending.group) : nil)
        }
        return true
    }

    private static func checkSameGroup(_ stored: String, _ requested: String) throws(ChatError) {
        guard stored == requested else {
            throw ChatError(.conflict, "this `clientId` was already used for a message in another group; choose a new one")
        }
    }

    static func json(_ message: ChatMessage, group: String) -> [UInt8] {
        var object = JSONWriter()
        message.write(into: &object, group: group)
        return object.finished()
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
