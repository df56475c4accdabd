import Bytes
import Deflate
import HTTP
import Logging
import Posix
import Relay
import Store
import TLS
import WebSocket

/// The running server: listeners, connections, endpoints and the periodic tick, all on one
/// event loop thread.
///
/// One loop serves every socket: on a 2-core machine that leaves a core for the store's
/// thread and the kernel, and keeps rooms free of locks (docs/architecture.md).
public final class Server: ConnectionOwner {
    public let configuration: ServerConfiguration
    let logger: Logger
    let loop: EventLoop
    let metrics = Metrics()
    let limits: ConnectionLimits
    let compression: CompressionPolicy
    let echo = EchoEndpoint()
    private(set) var rooms: RoomEndpoint!
    private(set) var presenceStream: PresenceStream!
    let presenceWebhook: Webhook?
    let offlineWebhook: Webhook?
    /// `/ws` and the store it persists to, from `start` on (see Server+Chat.swift).
    var chat: ChatEndpoint?
    var store: Store?
    var connections: ContiguousArray<Connection> = []
    /// Open sockets per peer address, against `maxConnectionsPerAddress`.
    private var addressCounts: [String: Int] = [:]
    /// Every client socket counts against this: `maxConnections`, lowered at start to what the
    /// descriptor limit leaves after a reserve for the store, listeners and the loop. WebSockets
    /// and presence streams need no count of their own: they are sockets.
    private(set) var socketLimit: Int
    /// Connections refused at accept that are still saying so (at most `maxRefusing`).
    private var refusing = 0
    /// Listeners that ran out of descriptors; resumed when a connection closes (or at a tick).
    private var pausedListeners: [Listener] = []
    private var lastDescriptorWarning: UInt64?
    /// Where a TLS 1.2 connection gathers its queued frames for one `SSL_write` at the flush
    /// (TLSSession.send(_:byteCount:scratch:); TLS 1.3 seals from the frames directly): four
    /// full records, shared because the loop runs one flush at a time.
    let tlsScratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 4 * 16_384, alignment: 16)
    var listeners: [Listener] = []
    let staticFiles: StaticFiles
    private var isReady = false
    private var shutdownDeadline: UInt64?

    /// How long a closing connection may take to finish the closing handshake.
    static let closeTimeout: UInt64 = 2_000_000_000
    static let tickMilliseconds = 250
    static let shutdownMilliseconds: UInt64 = 3000
    /// Descriptors kept free of connections: listeners, epoll, eventfd, signalfd, the store's
    /// files, a static file being read.
    static let reservedDescriptors = 32
    /// Refused connections answered gracefully at once (a write, then a close once the peer
    /// has read it, at most the close timeout later); more are closed at once. Taken from the
    /// reserve above.
    static let maxRefusing = 16

    public init(configuration: ServerConfiguration, logger: Logger) throws {
        self.configuration = configuration
        self.logger = logger
        self.loop = try EventLoop()
        self.socketLimit = configuration.maxConnections
        self.compression = CompressionPolicy(configuration: configuration.deflate)
        self.limits = ConnectionLimits(
            timeouts: .init(
                handshake: Server.nanoseconds(configuration.handshakeTimeout),
                idle: Server.nanoseconds(configuration.idleTimeout),
                ping: Server.nanoseconds(configuration.pingInterval),
                close: Server.closeTimeout),
            // Never less than two of the largest messages, so one legitimate big message never
            // counts as a slow reader.
            outboundBytes: max(configuration.outboundQueueBytes, 2 * configuration.maxMessageSize),
            maxMessageSize: configuration.maxMessageSize,
            maxRequestsPerConnection: configuration.maxRequestsPerConnection)
        self.staticFiles = StaticFiles(directory: configuration.publicDirectory, logger: logger)
        self.presenceWebhook = try Server.webhook(configuration.presenceWebhook, "presenceWebhook", configuration, logger)
        self.offlineWebhook = try Server.webhook(configuration.offlineWebhook, "offlineWebhook", configuration, logger)
        self.rooms = RoomEndpoint(
            metrics: metrics,
            messagesPerSecond: configuration.roomMessagesPerSecond,
            // Never below the largest message, which must always be able to pass.
            bytesPerSecond: max(configuration.roomBytesPerSecond, configuration.maxMessageSize)
        ) { [unowned self] head in chatUserName(head) }
        self.presenceStream = PresenceStream(
            epoch: String(SystemClock.epochMilliseconds()),
            heartbeatMilliseconds: Int(configuration.heartbeatInterval * 1000)
        ) { [unowned self] in presenceSnapshot() }
    }

    /// The webhook posting to `url`, if one is set; a URL without a secret stops the start.
    private static func webhook(
        _ url: String?, _ setting: String, _ configuration: ServerConfiguration, _ logger: Logger
    ) throws(WebhookError) -> Webhook? {
        guard let url else { return nil }
        guard let target = WebhookTarget(url) else {
            throw WebhookError(description: "\(setting) must be an http://host[:port]/path URL")
        }
        guard let secret = configuration.webhookSecret, !secret.isEmpty else {
            throw WebhookError(description: "\(setting) needs webhookSecret, the key its requests are signed with")
        }
        return Webhook(target: target, secret: Array(secret.utf8), queueLimit: configuration.webhookQueueLimit, logger: logger)
    }

    deinit {
        tlsScratch.deallocate()
    }

    static func nanoseconds(_ seconds: Double) -> UInt64 {
        UInt64(max(0, seconds) * 1_000_000_000)
    }

    /// Opens the listeners. Returns their URLs (`ws://HOST:PORT`, `wss://HOST:PORT`) with the
    /// ports actually bound.
    public func start(tls: TLSContext?) throws -> [String] {
        let limit = Socket.raiseFileLimit()
        socketLimit = max(1, min(configuration.maxConnections, limit - Server.reservedDescriptors))
        logger.debug("file descriptor limit \(limit), connections at most \(socketLimit)")
        try openChat()
        var urls: [String] = []
        let plain = try Socket.listen(host: configuration.host, port: configuration.port)
        listeners.append(Listener(fd: plain.fd, port: plain.port, tlsContext: nil, server: self))
        urls.append("ws://\(configuration.host):\(plain.port)")
        if let tls {
            let secure = try Socket.listen(host: configuration.host, port: configuration.tlsPort)
            listeners.append(Listener(fd: secure.fd, port: secure.port, tlsContext: tls, server: self))
            urls.append("wss://\(configuration.host):\(secure.port)")
        }
        for listener in listeners { try loop.register(listener.fd, listener) }
        try loop.onShutdownSignal { [unowned self] signal in
            logger.notice("received signal \(signal): shutting down")
            beginShutdown()
        }
        try loop.onReloadSignal { [unowned self] in reloadCertificate() }
        scheduleTick()
        scheduleHeartbeat()
        isReady = true
        return urls
    }

    /// Runs the event loop on the calling thread until shutdown has finished.
    public func run() throws {
        defer { closeChat() }
        try loop.run()
    }

    /// A plain refusal for a client over a connection limit, written once before the close.
    private static let busy = Array(HTTPResponse.error(
        .serviceUnavailable, code: "unavailable", message: "the server is at its connection limit; try again later"
    ).serialize(keepAlive: false))
    private static let tooManyFromAddress = Array(HTTPResponse.error(
        .tooManyRequests, code: "rate_limited", message: "too many connections from your address; close some first"
    ).serialize(keepAlive: false))

    func accepted(_ fd: Int32, tls context: TLSContext?) {
        let address = Socket.peerAddress(fd)
        let fromAddress = addressCounts[address, default: 0]
        let perAddress = configuration.maxConnectionsPerAddress
        let underLimit = connections.count - refusing < socketLimit
        guard underLimit, perAddress == 0 || fromAddress < perAddress else {
            metrics.refusedConnections += 1
            refuse(fd, plain: context == nil, underLimit ? Server.tooManyFromAddress : Server.busy)
            return
        }
        var session: TLSSession?
        if let context {
            do {
                session = try TLSSession(context: context)
            } catch {
                logger.warning("TLS session could not be created: \(error)")
                Socket.close(fd)
                return
            }
        }
        let connection = Connection(fd: fd, owner: self, tls: session, address: address)
        do {
            try loop.register(fd, connection)
        } catch {
            logger.debug("register failed", metadata: ["error": "\(error)"])
            Socket.close(fd)
            return
        }
        connection.slot = connections.count
        connections.append(connection)
        addressCounts[address] = fromAddress + 1
    }

    /// Answers a connection over a limit and closes it once the answer is read, so the close
    /// does not turn the peer's unread request into a reset that destroys the answer. A TLS
    /// client could not read a plaintext answer: it just sees the close.
    private func refuse(_ fd: Int32, plain: Bool, _ answer: [UInt8]) {
        let connection = Connection(fd: fd, owner: self, tls: nil)
        guard refusing < Server.maxRefusing, (try? loop.register(fd, connection)) != nil else {
            if plain { Socket.writeOnce(fd, answer) }
            Socket.close(fd)
            return
        }
        refusing += 1
        connection.isRefusal = true
        connection.slot = connections.count
        connections.append(connection)
        connection.refuse(plain ? answer : [])
    }

    /// A listener hit the descriptor limit: it stays paused, its backlog waiting in the
    /// kernel, until a connection closes. Warns at most once a second.
    func pauseAccepting(_ listener: Listener) {
        if !pausedListeners.contains(where: { $0 === listener }) { pausedListeners.append(listener) }
        let now = loop.now
        if lastDescriptorWarning.map({ now - $0 >= 1_000_000_000 }) ?? true {
            lastDescriptorWarning = now
            logger.warning("accept: out of file descriptors; accepting again when a connection closes")
        }
    }

    private func resumeAccepting() {
        let paused = pausedListeners
        pausedListeners.removeAll()
        for listener in paused where listeners.contains(where: { $0 === listener }) {
            listener.readable(hangup: false)
        }
    }

    var now: UInt64 { loop.now }

    func closed(_ connection: Connection) {
        if connection.isRefusal {
            refusing -= 1
        } else if let count = addressCounts[connection.address] {
            addressCounts[connection.address] = count > 1 ? count - 1 : nil
        }
        defer { if !pausedListeners.isEmpty { resumeAccepting() } }
        let slot = connection.slot
        guard slot < connections.count, connections[slot] === connection else { return }
        let last = connections.removeLast()
        if slot < connections.count {
            connections[slot] = last
            last.slot = slot
        }
    }

    // MARK: Routing

    func endpoint(for route: Route, head: HTTPRequestHead) -> EndpointChoice {
        switch route {
        case .echo where configuration.echo:
            return .accept(echo)
        case .room(let name):
            guard RoomName.isValid(name) else {
                return .refuse(.error(.badRequest, code: "bad_request",
                                      message: "room names are 1 to 64 characters of A-Z a-z 0-9 . _ -"))
            }
            if !configuration.allowAnonymousRooms && chatUserName(head) == nil {
                return .refuse(.error(.unauthorized, code: "unauthorized",
                                      message: "this server needs a valid token: /rooms/\(name)?token=..."))
            }
            return .accept(rooms)
        case .chat:
            if let chat { return .accept(chat) }
            return .refuse(.error(.serviceUnavailable, code: "unavailable", message: "the chat store is not loaded"))
        default:
            return .refuse(.error(.notFound, code: "not_found", message: "no WebSocket endpoint at \(head.path)"))
        }
    }

    func plainResponse(for route: Route, head: HTTPRequestHead) -> HTTPResponse {
        if route.isWebSocket, route != .echo || configuration.echo {
            var response = HTTPResponse.error(
                .upgradeRequired, code: "upgrade_required",
                message: "\(head.path) is a WebSocket endpoint: connect with a WebSocket client")
            response.headers.add("Upgrade", "websocket")
            response.headers.add("Sec-WebSocket-Version", "13")
            return response
        }
        switch route {
        case .health:
            return .json(.ok, body: #"{"status":"ok"}"#)
        case .ready:
            return isReady && shutdownDeadline == nil
                ? .json(.ok, body: #"{"status":"ready"}"#)
                : .json(.serviceUnavailable, body: #"{"status":"unavailable"}"#)
        case .metrics:
            var response = HTTPResponse(status: .ok, body: Array(metricsText().utf8))
            response.headers.add("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            return response
        case .presence:
            return presenceResponse(head)
        case .tree(let path):
            return treeResponse(path, head)
        case .page(let path):
            if let response = staticFiles.response(for: path, head: head) { return response }
        default:
            break
        }
        return .error(.notFound, code: "not_found", message: "nothing at \(head.path)")
    }

    // MARK: Time and shutdown

    private func scheduleTick() {
        loop.schedule(afterMilliseconds: Server.tickMilliseconds) { [unowned self] in
            tick()
            scheduleTick()
        }
    }

    private func tick() {
        let now = loop.now
        if !pausedListeners.isEmpty { resumeAccepting() }
        // Iterate by index from the end: a tick may close (and so remove) connections.
        var index = connections.count - 1
        while index >= 0 {
            if index < connections.count { connections[index].tick(now: now) }
            index -= 1
        }
        if let deadline = shutdownDeadline {
            if connections.isEmpty || now > deadline {
                for connection in connections { connection.closeNow() }
                loop.stop()
            }
        }
    }

    /// Stops accepting, closes every WebSocket with 1001 and stops the loop once they are gone
    /// (or after a few seconds). A second signal stops at once.
    func beginShutdown() {
        if shutdownDeadline != nil {
            loop.stop()
            return
        }
        shutdownDeadline = loop.now + Server.shutdownMilliseconds * 1_000_000
        for listener in listeners {
            loop.deregister(listener.fd)
            Socket.close(listener.fd)
        }
        listeners.removeAll()
        for connection in connections {
            connection.close(code: .goingAway, reason: "server shutting down")
        }
    }
}
