import JSON
import Store

/// What a new message carries: exactly one of `text` and `imageUrl`, and the sender's optional
/// `clientId` (ChatService.messageContent(_:)).
typealias MessageContent = (text: String?, imageUrl: String?, clientId: String?)

/// `subscribe`, `unsubscribe`, `send`, `history`, `receipt`, `typing`.
extension ChatService {
    func subscribe(_ request: ChatRequest, _ session: ChatSession<Client>, _ uid: String) throws(ChatError) {
        let gid = try request.required("group")
        try requireMember(gid, uid)
        let since = try request.string("since")
        let limit = try request.limit()
        page(gid, PageRequest(after: since, before: nil, limit: limit), session, request) { [self] page, more in
            // Subscribed in the same loop turn as the page is taken, so the live events start
            // exactly after the last message in the reply; a connection that closed while the
            // page was read subscribes to nothing.
            guard session.isOpen, let group = stillMember(session, request, gid, uid) else { return }
            addSubscription(session, gid, uid)
            let users = onlineUsers(in: gid)
            reply(session, request) { writer in
                writer.object("group") { group.write(into: &$0, id: gid, online: users) }
                writer.objects("messages", page) { $1.write(into: &$0, group: gid) }
                writer.bool("more", more)
            }
        }
    }

    /// The group, when `uid` is still the session's user and a member of it; else `request` is
    /// answered with the error and the result is nil. What a request checked before reading the
    /// disk is checked again when the read is done, since a `leave`, `logout` or `auth` on the
    /// same connection may have run meanwhile.
    func stillMember(_ session: ChatSession<Client>, _ request: ChatRequest, _ gid: String, _ uid: String) -> ChatGroup? {
        guard session.userID == uid else {
            fail(session, request.id, ChatError(.unauthorized, "the connection signed out or in as someone else before this was answered"))
            return nil
        }
        do throws(ChatError) {
            return try memberGroup(gid, uid)
        } catch {
            fail(session, request.id, error)
            return nil
        }
    }

    /// Answers `pageRequest` for group `gid` through `answer`, from memory at once or after
    /// reading older messages off the loop; a failed read answers `unavailable`.
    func page(
        _ gid: String, _ pageRequest: PageRequest, _ session: ChatSession<Client>, _ request: ChatRequest,
        answer: @escaping ([ChatMessage], Bool) -> Void
    ) {
        let log = state.messages[gid] ?? MessageLog()
        switch log.plan(pageRequest, group: gid) {
        case .ready(let messages, let more):
            answer(messages, more)
        case .read(let query, let boundary, let evictions):
            readStored(query) { [self] disk, diskMore, _ in
                guard let disk else { return fail(session, request.id, .storeFailed) }
                let now = state.messages[gid] ?? MessageLog()
                // A checkpoint dropped messages from memory meanwhile: what was read may not
                // reach them any more, so plan again.
                guard now.evictions == evictions else { return page(gid, pageRequest, session, request, answer: answer) }
                let (messages, more) = now.combine(pageRequest, boundary: boundary, disk: disk, diskMore: diskMore)
                answer(messages, more)
            }
        }
    }

    func unsubscribe(_ request: ChatRequest, _ session: ChatSession<Client>, _ uid: String) throws(ChatError) {
        let gid = try request.required("group")
        try requireMember(gid, uid)
        if session.subscriptions.remove(gid) != nil { removeSubscription(session, gid, uid) }
        reply(session, request)
    }

    func send(_ request: ChatRequest, _ session: ChatSession<Client>, _ uid: String) throws(ChatError) {
        let gid = try request.required("group")
        try requireMember(gid, uid)
        guard userSendRate.admit(uid, now: request.arrival) else {
            throw ChatError(.rateLimited,
                            "too many messages: at most \(configuration.userMessagesPerSecond) a second per user, across connections")
        }
        let content = try messageContent(request)
        // A connection's messages are stored in the order it sent them: behind a send whose
        // `clientId` is looked up on disk, the ones after it wait their turn.
        guard session.sendsBehindRead == nil else {
            session.sendsBehindRead?.append { [self] in
                guard stillMember(session, request, gid, uid) != nil else { return }
                store(content, from: uid, in: gid, session, request)
            }
            return
        }
        store(content, from: uid, in: gid, session, request)
    }

    /// Stores a `send`'s message unless its `clientId` was stored before; while that takes a
    /// read of the disk, the connection's later sends are held (`sendsBehindRead`).
    private func store(
        _ content: MessageContent, from uid: String, in gid: String, _ session: ChatSession<Client>, _ request: ChatRequest
    ) {
        // Without a `clientId` there is nothing to look up: no closures for `storeOnce`.
        guard content.clientId != nil else { return storeMessage(content, from: uid, in: gid, session, request) }
        storeOnce(uid, gid, content.clientId, holding: session, afterRead: { [self] in stillMember(session, request, gid, uid) != nil }, answer: { [self] result in
            switch result {
            case .success(let message): reply(session, request) { $0.raw("message", message) }
            case .failure(let error): fail(session, request.id, error)
            }
        }, storeNew: { [self] in storeMessage(content, from: uid, in: gid, session, request) })
    }

    /// Runs the sends that waited behind a read, in order, until one of them reads in its turn.
    private func releaseSends(of session: ChatSession<Client>) {
        guard var held = session.sendsBehindRead else { return }
        session.sendsBehindRead = nil
        while !held.isEmpty {
            held.removeFirst()()
            if session.sendsBehindRead != nil {
                session.sendsBehindRead = held
                return
            }
        }
    }

    /// Stores a new message and, once it is durable, answers and sends the event.
    ///
    /// The answer is written now, from the message, which then moves into the queue of pending
    /// messages: the completion keeps bytes, not a copy of the message and of the request.
    private func storeMessage(
        _ content: MessageContent, from uid: String, in gid: String, _ session: ChatSession<Client>, _ request: ChatRequest
    ) {
        let message = newMessage(content, from: uid)
        let ack = Self.acknowledgement(request.id, message, group: gid)
        // The journal line is put together from the answer's escaped values: the same bytes as
        // `Mutation.set(path: ["Messages", gid, id], value: message.treeValue)` without the
        // dictionary, the sorting of its keys and a second escaping of every string.
        let ticket = store.append(mutationCount: 1) { ack.written.appendJournalLine(from: ack.bytes, to: &$0) }
        let (id, arrival) = (request.id, request.arrival)
        committed(ticket, message: message, in: gid) { [self] succeeded in
            guard succeeded else { return fail(session, id, .storeFailed) }
            if session.isOpen { transport.send(ack.bytes, to: session.client) }
            // The event is the same moment as the ack: nobody sees a message that is not durable.
            // It is written only when someone else is subscribed (a sender alone in its group
            // gets the ack and nothing more).
            let subscribed = hasSubscribers(gid, besides: session.client)
            guard subscribed || onOfflineDelivery != nil else { return }
            let messageJSON = Array(ack.bytes[ack.message])
            if subscribed {
                broadcast(Self.messageEvent(gid, messageJSON), group: gid, except: session.client, arrival: arrival)
            }
            noteOfflineMembers(gid, sender: uid, messageJSON)
        }
    }

    /// The `ok` answer to a `send` (request `id`) with the stored message in it, and where in
    /// those bytes the message's own JSON lies: its event carries the same object.
    static func acknowledgement(
        _ id: JSONValue?, _ message: ChatMessage, group: String
    ) -> (bytes: [UInt8], message: Range<Int>, written: WrittenMessage) {
        message.plainAcknowledgement(id, group: group) ?? writtenAcknowledgement(id, message, group: group)
    }

    /// `acknowledgement` written field by field, escaping what needs it.
    static func writtenAcknowledgement(
        _ id: JSONValue?, _ message: ChatMessage, group: String
    ) -> (bytes: [UInt8], message: Range<Int>, written: WrittenMessage) {
        var writer = JSONWriter(op: "ok", answering: id)
        var written: WrittenMessage?
        let range = writer.object("message") { written = message.write(into: &$0, group: group) }
        return (writer.finished(), range, written!)
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

    /// Calls `storeNew` unless `uid` already sent `clientId` into `gid`; then `answer` gets
    /// that message as JSON, or `conflict` when it went to another group.
    ///
    /// A message in memory is answered at once; one still on its way to the disk is answered
    /// when it gets there (`storeFailed` if the store fails), like the first `send`; one that
    /// only the segments hold is read off the loop first. Either way nothing is written and no
    /// event goes out: the first `send` did both. When the store's index may hold the
    /// `clientId`, the read confirms it before anything is stored, and memory is asked again
    /// afterwards, since a resend may have been stored meanwhile. Once that read is done,
    /// `afterRead` says whether the request still stands (it answers it when not). While it
    /// reads, the later sends of connection `holding` wait for it (`sendsBehindRead`).
    func storeOnce(
        _ uid: String, _ gid: String, _ clientId: String?, checkDisk: Bool = true, holding session: ChatSession<Client>? = nil,
        afterRead: @escaping () -> Bool = { true }, answer: @escaping (Result<[UInt8], ChatError>) -> Void, storeNew: @escaping () -> Void
    ) {
        guard let clientId else { return storeNew() }
        if let (group, message) = state.message(sentBy: uid, clientId: clientId) {
            return answer(group == gid ? .success(Self.json(message, group: group)) : .failure(.clientIdConflict))
        }
        if let pending = pending.byClient[ClientMessageKey(user: uid, clientId: clientId)] {
            guard pending.group == gid else { return answer(.failure(.clientIdConflict)) }
            return committed(pending.ticket) { succeeded in
                answer(succeeded ? .success(Self.json(pending.message, group: pending.group)) : .failure(.storeFailed))
            }
        }
        let key = IdempotencyKey(owner: uid, key: clientId)
        guard checkDisk, store.mayHaveStored(key) else { return storeNew() }
        session?.sendsBehindRead = []
        readStored(.sentBy(key)) { [self] found, _, group in
            defer { if let session { releaseSends(of: session) } }
            guard afterRead() else { return }
            guard let found else { return answer(.failure(.storeFailed)) }
            guard let message = found.first, let group else {
                return storeOnce(uid, gid, clientId, checkDisk: false, answer: answer, storeNew: storeNew)
            }
            answer(group == gid ? .success(Self.json(message, group: group)) : .failure(.clientIdConflict))
        }
    }

    /// The `message` event of a stored message (`messageJSON`, from `json(_:group:)`).
    static func messageEvent(_ gid: String, _ messageJSON: [UInt8]) -> [UInt8] {
        var event = JSONWriter(op: "message")
        event.string("group", gid)
        event.raw("message", messageJSON)
        return event.finished()
    }

    /// The `receipt` event: `uid` received message `mid` of `gid` at `at`.
    static func receiptEvent(_ gid: String, _ mid: String, _ uid: String, _ at: Int64) -> [UInt8] {
        var event = JSONWriter(op: "receipt")
        event.string("group", gid)
        event.string("message", mid)
        event.string("user", uid)
        event.integer("at", at)
        return event.finished()
    }

    static func json(_ message: ChatMessage, group: String) -> [UInt8] {
        writtenJSON(message, group: group).bytes
    }

    /// `json`, and where each value lies in it (for the message's journal line).
    static func writtenJSON(_ message: ChatMessage, group: String) -> (bytes: [UInt8], written: WrittenMessage) {
        var object = JSONWriter()
        let written = message.write(into: &object, group: group)
        return (object.finished(), written)
    }

    func history(_ request: ChatRequest, _ session: ChatSession<Client>, _ uid: String) throws(ChatError) {
        let gid = try request.required("group")
        try requireMember(gid, uid)
        let before = try request.string("before")
        let after = try request.string("after")
        guard before == nil || after == nil else {
            throw ChatError(.badRequest, "give `before` or `after`, not both")
        }
        let limit = try request.limit()
        page(gid, PageRequest(after: after, before: before, limit: limit), session, request) { [self] page, more in
            guard stillMember(session, request, gid, uid) != nil else { return }
            reply(session, request) { writer in
                writer.objects("messages", page) { $1.write(into: &$0, group: gid) }
                writer.bool("more", more)
            }
        }
    }

    func receipt(_ request: ChatRequest, _ session: ChatSession<Client>, _ uid: String) throws(ChatError) {
        let gid = try request.required("group")
        try requireMember(gid, uid)
        let mid = try request.required("message")
        let log = state.messages[gid] ?? MessageLog()
        if log.index(of: mid) != nil || log.olderOnDisk == 0 || log.messages.first.map({ mid >= $0.id }) == true {
            try recordReceipt(gid, mid, session, request, uid)
            return
        }
        readStored(.one(group: gid, id: mid)) { [self] found, _, _ in
            guard let found else { return fail(session, request.id, .storeFailed) }
            guard !found.isEmpty else { return fail(session, request.id, ChatError(.notFound, "no such message in this group")) }
            guard stillMember(session, request, gid, uid) != nil else { return }
            do throws(ChatError) {
                try recordReceipt(gid, mid, session, request, uid, stored: true)
            } catch {
                fail(session, request.id, error)
            }
        }
    }

    /// Journals `receivedBy[uid]` of message `mid`, which is in memory or (`stored`) was just
    /// found on disk, and answers once it is durable.
    private func recordReceipt(
        _ gid: String, _ mid: String, _ session: ChatSession<Client>, _ request: ChatRequest, _ uid: String, stored: Bool = false
    ) throws(ChatError) {
        let index = state.messages[gid]?.index(of: mid)
        guard index != nil || stored else { throw ChatError(.notFound, "no such message in this group") }
        let now = clock.milliseconds()
        let ticket = store.append([.set(path: ["Messages", gid, mid, "receivedBy", uid], value: .integer(now))])
        if let index {
            state.messages[gid]?.setReceipt(at: index, user: uid, time: now, ticket: ticket)
        } else {
            state.messages[gid]?.setDetachedReceipt(mid, user: uid, time: now, ticket: ticket)
        }
        committed(ticket) { [self] succeeded in
            guard succeeded else { return fail(session, request.id, .storeFailed) }
            reply(session, request)
            broadcast(Self.receiptEvent(gid, mid, uid, now), group: gid)
        }
    }

    func typing(_ request: ChatRequest, _ session: ChatSession<Client>, _ uid: String) throws(ChatError) {
        let gid = try request.required("group")
        try requireMember(gid, uid)
        reply(session, request)
        broadcast(Self.typingEvent(gid, uid), group: gid, except: session.client)
        onTyping?(gid, uid)
    }

    /// Cluster mode: `uid` is typing in `gid` on another node; this node's subscribers hear it.
    public func remoteTyping(_ gid: String, _ uid: String) {
        guard state.groups[gid]?.members.contains(uid) == true else { return }
        broadcast(Self.typingEvent(gid, uid), group: gid)
    }

    private static func typingEvent(_ gid: String, _ uid: String) -> [UInt8] {
        var event = JSONWriter(op: "typing")
        event.string("group", gid)
        event.string("user", uid)
        return event.finished()
    }
}
