import JSON
import Store

/// `subscribe`, `unsubscribe`, `send`, `history`, `receipt`, `typing`.
extension ChatService {
    func subscribe(_ request: ChatRequest, _ session: ChatSession<Client>, _ uid: String) throws(ChatError) {
        let gid = try request.required("group")
        let group = try memberGroup(gid, uid)
        let since = try request.string("since")
        let limit = try request.limit()
        page(gid, PageRequest(after: since, before: nil, limit: limit), session, request) { [self] page, more in
            // Subscribed in the same loop turn as the page is taken, so the live events start
            // exactly after the last message in the reply; a connection that closed while the
            // page was read subscribes to nothing.
            guard session.isOpen else { return }
            addSubscription(session, gid, uid)
            let users = onlineUsers(in: gid)
            reply(session, request) { writer in
                writer.object("group") { group.write(into: &$0, id: gid, online: users) }
                writer.objects("messages", page) { $1.write(into: &$0, group: gid) }
                writer.bool("more", more)
            }
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
            readStored(query) { [self] disk, diskMore in
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
        _ = try memberGroup(gid, uid)
        if session.subscriptions.remove(gid) != nil { removeSubscription(session, gid, uid) }
        reply(session, request)
    }

    func send(_ request: ChatRequest, _ session: ChatSession<Client>, _ uid: String) throws(ChatError) {
        let gid = try request.required("group")
        _ = try memberGroup(gid, uid)
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

    func history(_ request: ChatRequest, _ session: ChatSession<Client>, _ uid: String) throws(ChatError) {
        let gid = try request.required("group")
        _ = try memberGroup(gid, uid)
        let before = try request.string("before")
        let after = try request.string("after")
        guard before == nil || after == nil else {
            throw ChatError(.badRequest, "give `before` or `after`, not both")
        }
        let limit = try request.limit()
        page(gid, PageRequest(after: after, before: before, limit: limit), session, request) { [self] page, more in
            reply(session, request) { writer in
                writer.objects("messages", page) { $1.write(into: &$0, group: gid) }
                writer.bool("more", more)
            }
        }
    }

    func receipt(_ request: ChatRequest, _ session: ChatSession<Client>, _ uid: String) throws(ChatError) {
        let gid = try request.required("group")
        _ = try memberGroup(gid, uid)
        let mid = try request.required("message")
        let log = state.messages[gid] ?? MessageLog()
        if log.index(of: mid) != nil || log.olderOnDisk == 0 || log.messages.first.map({ mid >= $0.id }) == true {
            try recordReceipt(gid, mid, session, request, uid)
            return
        }
        readStored(.one(group: gid, id: mid)) { [self] found, _ in
            guard let found else { return fail(session, request.id, .storeFailed) }
            guard !found.isEmpty else { return fail(session, request.id, ChatError(.notFound, "no such message in this group")) }
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
