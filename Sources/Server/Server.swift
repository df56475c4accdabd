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
    /// Upgraded connections and presence streams whose close is not decided yet
    /// (`maxConnections` counts these).
    var sessionCount = 0
    /// Where a TLS 1.2 connection gathers its queued frames for one `SSL_write` at the flush
    /// (TLSSession.send(_:byteCount:scratch:); TLS 1.3 seals from the frames directly): four
    /// full records, shared because the loop runs one flush at a time.
    let tlsScratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 4 * 16_384, alignment: 16)
    private var listeners: [Listener] = []
    private var pages: [String: [UInt8]] = [:]
    private var isReady = false
    private var shutdownDeadline: UInt64?

    /// How long a closing connection may take to finish the closing handshake.
    static let closeTimeout: UInt64 = 2_000_000_000
    static let tickMilliseconds = 250
    static let shutdownMilliseconds: UInt64 = 3000

    public init(configuration: ServerConfiguration, logger: Logger) throws {
        self.configuration = configuration
        self.logger = logger
        self.loop = try EventLoop()
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
            maxMessageSize: configuration.maxMessageSize)
        self.presenceWebhook = try Server.webhook(configuration.presenceWebhook, "presenceWebhook", configuration, logger)
        self.offlineWebhook = try Server.webhook(configuration.offlineWebhook, "offlineWebhook", configuration, logger)
        self.rooms = RoomEndpoint(metrics: metrics) { [unowned self] head in chatUserName(head) }
        self.presenceStream = PresenceStream(epoch: String(SystemClock.epochMilliseconds())) { [unowned self] in
            presenceSnapshot()
        }
        for name in ["index.html", "monitor.html", "monitor.js", "monitor.css"] {
            if let page = FileSystem.readFile(configuration.publicDirectory + "/" + name) { pages[name] = page }
        }
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
        logger.debug("file descriptor limit \(limit)")
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

    func accepted(_ fd: Int32, tls context: TLSContext?) {
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
        let connection = Connection(fd: fd, owner: self, tls: session)
        do {
            try loop.register(fd, connection)
        } catch {
            logger.debug("register failed", metadata: ["error": "\(error)"])
            Socket.close(fd)
            return
        }
        connection.slot = connections.count
        connections.append(connection)
    }

    var now: UInt64 { loop.now }

    func sessionEnded(_ connection: Connection) {
        sessionCount -= 1
    }

    func closed(_ connection: Connection) {
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
        case .page(let name):
            guard let page = pages[name] else { break }
            return Server.pageResponse(name, page)
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
