import Chat
import HTTP
import JSON
import Store
import Crypto

/// The chat service's place in the server: the store it lives on, the presence timer, and the
/// admin HTTP APIs (`/api/v1/presence`, `/api/v1/tree/{path}`).
extension Server {
    /// How often folded `presence` diffs are sent (docs/protocol.md, "Events": at most one diff per group per period).
    static let presenceMilliseconds = 50

    /// Opens the store, builds the chat state from its tree, and wires durability callbacks.
    /// A locked or corrupt data folder throws, which stops the start.
    func openChat() throws {
        let durability = Durability(rawValue: configuration.durability) ?? .fsync
        let opened = try Store.open(
            directory: configuration.dataDirectory, durability: durability,
            compactAfterBytes: configuration.compactAfterBytes, segmentBytes: configuration.segmentBytes,
            recentMessages: configuration.recentMessages, logger: logger)
        let store = opened.store
        let state = ChatState(tree: opened.tree, storedCounts: store.storedMessageCounts)
        let secret: [UInt8]
        if let configured = configuration.authSecret, !configured.isEmpty {
            secret = Array(configured.utf8)
        } else {
            do {
                secret = try store.readOrCreateSecret()
            } catch {
                store.close()
                throw error
            }
        }
        var chatConfiguration = ChatConfiguration()
        chatConfiguration.allowSignup = configuration.allowSignup
        chatConfiguration.tokenLifetime = Int64(configuration.tokenLifetime)
        chatConfiguration.messagesPerSecond = configuration.messagesPerSecond
        chatConfiguration.maxTextBytes = min(16 * 1024, configuration.maxMessageSize)
        let endpoint = ChatEndpoint(server: self)
        let service = ChatService(
            state: state, store: store, transport: endpoint, secret: secret,
            configuration: chatConfiguration, logger: logger)
        endpoint.attach(service)
        let bound = LoopBound(service)
        let loop = self.loop
        store.onDurable = { ticket in loop.execute { bound.value.durable(through: ticket) } }
        store.onFailure = { ticket, _ in loop.execute { bound.value.failed(through: ticket) } }
        store.onCheckpoint = { report in loop.execute { bound.value.checkpointed(report) } }
        store.onRead = { tag, result in loop.execute { bound.value.readFinished(tag: tag, result) } }
        self.store = store
        self.chat = endpoint
        logger.info("chat state loaded: \(state.users.count) users, \(state.groups.count) groups, \(state.messageCount) messages")
        schedulePresence()
    }

    private func schedulePresence() {
        loop.schedule(afterMilliseconds: Server.presenceMilliseconds) { [unowned self] in
            chat?.service?.flushPresence()
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

    private static let adminRequired = HTTPResponse.error(
        .unauthorized, code: "unauthorized", message: "send Authorization: Bearer <admin token>")

    /// `GET /api/v1/presence`: open when no admin token is configured.
    func presenceResponse(_ head: HTTPRequestHead) -> HTTPResponse {
        if configuration.adminToken != nil && !isAdmin(head) { return Server.adminRequired }
        guard let service = chat?.service else {
            return .error(.serviceUnavailable, code: "unavailable", message: "the store is not loaded yet")
        }
        return HTTPResponse(status: .ok, headers: ["Content-Type": "application/json"], body: service.presenceSnapshot())
    }

    /// `GET /api/v1/tree/{path}`: admin only, so refused outright when no admin token is set.
    func treeResponse(_ path: String, _ head: HTTPRequestHead) -> HTTPResponse {
        guard configuration.adminToken != nil else {
            return .error(.forbidden, code: "forbidden", message: "the tree API needs an admin token in the configuration (adminToken)")
        }
        guard isAdmin(head) else { return Server.adminRequired }
        let components = path.split(separator: "/").map(String.init)
        guard let service = chat?.service, let value = service.subtree(components) else {
            return .error(.notFound, code: "not_found", message: "nothing at /\(path) in the tree")
        }
        return HTTPResponse(status: .ok, headers: ["Content-Type": "application/json"], body: value.serialized)
    }
}
