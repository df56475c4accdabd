import Chat
import Crypto
import HTTP
import JSON
import Posix
import Store

/// The chat service's place in the server: the store it lives on, the presence timer, the admin
/// HTTP APIs (`/api/v1/presence`, `/api/v1/tree/{path}`), and the one admin check that every
/// admin endpoint uses (`adminRefusal`).
extension Server {
    /// How often folded `presence` diffs are sent (docs/protocol.md, "Events": at most one diff per group per period).
    static let presenceMilliseconds = 50

    /// Opens the store, builds the chat state from its tree, and wires durability callbacks.
    /// A locked or corrupt data folder throws, which stops the start.
    func openChat() throws {
        let durability = Durability(rawValue: configuration.durability) ?? .fsync
        var chatConfiguration = ChatConfiguration()
        chatConfiguration.allowSignup = configuration.allowSignup
        chatConfiguration.tokenLifetime = Int64(configuration.tokenLifetime)
        chatConfiguration.messagesPerSecond = configuration.messagesPerSecond
        chatConfiguration.maxTextBytes = min(16 * 1024, configuration.maxMessageSize)
        chatConfiguration.userMessagesPerSecond = configuration.userMessagesPerSecond
        chatConfiguration.signupsPerHour = configuration.signupsPerHour
        chatConfiguration.groupsPerHour = configuration.groupsPerHour
        chatConfiguration.retentionMessages = configuration.retentionMessages
        chatConfiguration.retentionMilliseconds = Int64(configuration.retentionDays) * 86_400_000
        chatConfiguration.mediaQuotaBytes = configuration.mediaQuotaBytes
        chatConfiguration.uploadsPerMinute = configuration.uploadsPerMinute
        // In cluster mode the data folder holds this node's copy of the cluster's history, which
        // Redis keeps durable: it is written without fsync (docs/cluster.md, "One history").
        let opened = try Store.open(
            directory: configuration.dataDirectory, durability: configuration.redis == nil ? durability : .none,
            compactAfterBytes: configuration.compactAfterBytes, segmentBytes: configuration.segmentBytes,
            recentMessages: configuration.recentMessages, idempotencyFields: ChatService<ChatDelivery>.idempotencyFields,
            retention: ChatService<ChatDelivery>.retention(chatConfiguration, now: ChatClock.system.milliseconds()),
            logger: logger)
        let store = opened.store
        // The journal opened at start grows, and every fsync of it writes the file's size too:
        // it makes way for the spare of zeros as soon as the compactor has written one.
        store.replacesFirstJournal = true
        let journalPosition = opened.tree["Cluster"]?["journal"]?.stringValue
        let state = ChatState(tree: opened.tree, storedCounts: store.storedMessageCounts)
        let secret: [UInt8]
        let configuredSecret = configuration.authSecret.map { !$0.isEmpty } ?? false
        if let configured = configuration.authSecret, configuredSecret {
            secret = Array(configured.utf8)
        } else {
            do {
                secret = try store.readOrCreateSecret()
            } catch {
                store.close()
                throw error
            }
        }
        let mediaFiles: MediaFiles
        do {
            mediaFiles = try MediaFiles(directory: configuration.dataDirectory + "/media", durability: durability, logger: logger)
        } catch {
            store.close()
            throw error
        }
        mediaFiles.removeFiles(keeping: Set(state.media.keys))
        let endpoint = ChatDelivery(server: self)
        let service = ChatService(
            // In cluster mode without `authSecret` the secret is the cluster's, known once the
            // node reaches Redis; the folder's own is what this node proposes if it is the first.
            state: state, store: store, transport: endpoint, secret: configuration.redis == nil || configuredSecret ? secret : [],
            configuration: chatConfiguration, logger: logger)
        endpoint.attach(service)
        service.onPresenceChange = { [unowned self] change in presenceChanged(change) }
        if let offlineWebhook {
            service.onOfflineDelivery = { delivery in offlineWebhook.enqueue(delivery.json, type: "offline") }
        }
        let bound = LoopBound(service)
        let loop = self.loop
        if let redis = configuration.redis {
            // The cluster's journal says when a change is durable; the local store is this
            // node's copy of the cluster's history (docs/cluster.md, "One history").
            clusterJournal = ClusterJournal(
                server: self, url: redis, node: nodeId, service: service, store: store, position: journalPosition,
                secret: configuredSecret ? .configured : .proposed(secret), snapshotEntries: configuration.snapshotEntries,
                logger: logger)
            store.onFailure = { [logger] ticket, error in
                logger.error("this node's copy of the history could not be written", metadata: ["ticket": "\(ticket)", "error": "\(error)"])
            }
        } else {
            store.onDurable = { ticket in loop.execute { bound.value.durable(through: ticket) } }
            store.onFailure = { ticket, _ in loop.execute { bound.value.failed(through: ticket) } }
        }
        store.onCheckpoint = { report in loop.execute { bound.value.checkpointed(report) } }
        store.onRead = { tag, result in loop.execute { bound.value.readFinished(tag: tag, result) } }
        self.store = store
        self.mediaFiles = mediaFiles
        self.chat = endpoint
        logger.info("chat state loaded: \(state.users.count) users, \(state.groups.count) groups, \(state.messageCount) messages")
        schedulePresence()
    }

    private func schedulePresence() {
        loop.schedule(afterMilliseconds: Server.presenceMilliseconds) { [unowned self] in
            chat?.service?.signOutExpired()
            chat?.service?.flushPresence()
            flushRoomPresence()
            schedulePresence()
        }
    }

    /// Flushes and closes the store after the loop has stopped.
    func closeChat() {
        store?.close()
        store = nil
    }

    /// The display name for a valid `token` query parameter (plain rooms).
    func chatUserName(_ head: HTTPRequestHead) -> String? {
        guard let token = head.query["token"], !token.isEmpty else { return nil }
        return chat?.service?.userName(forToken: token)
    }

    /// Whether the request carries `Authorization: Bearer <adminToken>`.
    private func isAdmin(_ head: HTTPRequestHead) -> Bool {
        guard let adminToken = configuration.adminToken, let header = head.headers["Authorization"] else { return false }
        let prefix = "Bearer "
        guard header.hasPrefix(prefix) else { return false }
        return Crypto.constantTimeEquals(Array(header.dropFirst(prefix.count).utf8), Array(adminToken.utf8))
    }

    /// The refusal for an admin endpoint, or nil when the request may pass: every admin API
    /// answers `403` unless an admin token is configured and this request presents it, so
    /// nothing about users is served anonymously (docs/security.md). With
    /// `acceptingStreamToken` (the presence stream), a valid stream token in the `token` query
    /// parameter counts too, for `EventSource`, which cannot send headers (StreamToken).
    func adminRefusal(_ head: HTTPRequestHead, acceptingStreamToken: Bool = false) -> HTTPResponse? {
        guard let adminToken = configuration.adminToken else {
            return .error(.forbidden, code: "forbidden",
                          message: "the admin APIs are off: configure an admin token (adminToken) to use them")
        }
        if isAdmin(head) { return nil }
        if acceptingStreamToken, let token = head.query["token"],
           StreamToken.verify(token, key: Array(adminToken.utf8), now: SystemClock.epochMilliseconds() / 1000) {
            return nil
        }
        return .error(.forbidden, code: "forbidden", message: "send Authorization: Bearer <admin token>")
    }

    /// `GET /api/v1/presence`: admin only.
    func presenceResponse(_ head: HTTPRequestHead) -> HTTPResponse {
        if let refusal = adminRefusal(head) { return refusal }
        guard let service = chat?.service else {
            return .error(.serviceUnavailable, code: "unavailable", message: "the store is not loaded yet")
        }
        return HTTPResponse(status: .ok, headers: ["Content-Type": "application/json"], body: service.presenceSnapshot(rooms: roomPresence?.snapshot ?? []))
    }

    /// `GET /api/v1/tree/{path}`: admin only.
    func treeResponse(_ path: String, _ head: HTTPRequestHead) -> HTTPResponse {
        if let refusal = adminRefusal(head) { return refusal }
        let components = path.split(separator: "/").map(String.init)
        guard let service = chat?.service, let value = service.subtree(components) else {
            return .error(.notFound, code: "not_found", message: "nothing at /\(path) in the tree")
        }
        return HTTPResponse(status: .ok, headers: ["Content-Type": "application/json"], body: value.serialized)
    }
}
