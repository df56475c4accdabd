import Bytes
import Crypto
import Deflate
import HTTP
import Logging
import Posix
import Relay
import Store
import Synchronization
import TLS
import WebSocket

/// One event loop of the running server: its connections, endpoints and periodic tick, on one
/// thread; the first loop (index 0, the chat loop) also holds the listeners, the chat service
/// and its store, the room directory and the presence stream.
///
/// The process runs `threads` loops (the cores it may use, by default), each a `Server` on a
/// thread of its own. Loops share nothing mutable: whatever one needs from another travels
/// as work in a `HandOff`, one batch per pair of loops per iteration, so no lock sits on the
/// per-message path (docs/architecture.md, "Thread model"). The executable makes the chat loop,
/// which makes the others at `start` and runs them in `run`.
public final class Server: ConnectionOwner {
    public let configuration: ServerConfiguration
    let logger: Logger
    /// This loop's place among `peers`; 0 is the chat loop.
    let index: Int
    let loop: EventLoop
    let metrics = Metrics()
    let limits: ConnectionLimits
    /// Per loop: its shared zlib streams are used by this loop's connections only.
    let compression: CompressionPolicy
    let echo = EchoEndpoint()
    private(set) var rooms: RoomEndpoint!
    private(set) var chatReaders: ChatEndpoint!
    private(set) var presenceStream: PresenceStream!
    let presenceWebhook: Webhook?
    let offlineWebhook: Webhook?
    /// The chat service's transport and the store it persists to, on the chat loop from `start`
    /// on (see Server+Chat.swift); nil on the other loops.
    var chat: ChatDelivery?
    var store: Store?
    /// `/rooms` across the cluster's nodes, on the chat loop in cluster mode (`redis` set).
    var cluster: ClusterRooms?
    /// The chat service's history shared through Redis, on the chat loop in cluster mode.
    var clusterJournal: ClusterJournal?
    /// On the chat loop, read by every loop's `/readyz`: whether the cluster's Redis is
    /// reachable and this node's share written to it (always false outside cluster mode).
    let clusterReady = Atomic<Bool>(false)
    /// The files of uploaded media, in the data folder's `media/` (see Server+Media.swift).
    var mediaFiles: MediaFiles?
    /// On the chat loop: uploads from other loops whose heads it admitted, by connection, until
    /// their bodies arrive or the connection closes (Server+Media.swift).
    var admittedUploads: [ObjectIdentifier: ConnectionHandle] = [:]
    var connections: ContiguousArray<Connection> = []
    /// Every loop, this one included, in index order; set at `start`, before any loop runs, and
    /// never changed while they run.
    private(set) var peers: [Server] = []
    /// This loop's hand-offs to each other loop (nil at its own index).
    private var handOffs: [HandOff?] = []
    /// The loops started by `run`, on the chat loop.
    private var threads: [LoopThread] = []
    /// Where the next accepted connection goes (round robin over the loops).
    private var nextLoop = 0
    /// Open sockets per client address (`Connection.address`), against
    /// `maxConnectionsPerAddress`: counted on the chat loop, which accepts every connection;
    /// the other loops report their closes to it.
    private var addressCounts: [String: Int] = [:]
    /// Accepted connections not yet closed, on every loop, against `socketLimit`.
    private var openConnections = 0
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

    /// The chat loop; it makes the other loops at `start`. A configuration without `nodeId`
    /// gets a generated one here, which every loop shares.
    public convenience init(configuration: ServerConfiguration, logger: Logger) throws {
        var configuration = configuration
        if configuration.nodeId == nil { configuration.nodeId = Server.generatedNodeId() }
        try self.init(configuration: configuration, logger: logger, index: 0, staticFiles: nil)
    }

    /// `node-` and 16 random hex digits: unique among a cluster's nodes, and a new one at every
    /// start, so a restarted node is never taken for the one that died (docs/cluster.md).
    static func generatedNodeId() -> String {
        "node-" + Crypto.randomHex(8)
    }

    /// This node's name in the cluster (`nodeId`, or the generated one).
    public var nodeId: String { configuration.nodeId ?? "" }

    private init(configuration: ServerConfiguration, logger: Logger, index: Int, staticFiles: StaticFiles?) throws {
        self.configuration = configuration
        self.logger = logger
        self.index = index
        self.loop = try EventLoop()
        self.socketLimit = configuration.maxConnections
        self.compression = CompressionPolicy(configuration: configuration.deflate)
        var limits = ConnectionLimits(
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
        limits.httpOutboundBytes = max(limits.outboundBytes, configuration.maxUploadBytes + 64 * 1024)
        self.limits = limits
        self.staticFiles = staticFiles ?? StaticFiles(directory: configuration.publicDirectory, logger: logger)
        let isChatLoop = index == 0
        self.presenceWebhook = isChatLoop
            ? try Server.webhook(configuration.presenceWebhook, "presenceWebhook", configuration, logger) : nil
        self.offlineWebhook = isChatLoop
            ? try Server.webhook(configuration.offlineWebhook, "offlineWebhook", configuration, logger) : nil
        self.rooms = RoomEndpoint(
            server: self,
            messagesPerSecond: configuration.roomMessagesPerSecond,
            // Never below the largest message, which must always be able to pass.
            bytesPerSecond: max(configuration.roomBytesPerSecond, configuration.maxMessageSize))
        self.chatReaders = ChatEndpoint(server: self)
        if isChatLoop {
            self.presenceStream = PresenceStream(
                epoch: String(SystemClock.epochMilliseconds()),
                heartbeatMilliseconds: Int(configuration.heartbeatInterval * 1000),
                snapshot: { [unowned self] in presenceSnapshot() },
                send: { [unowned self] handle, chunks in
                    onHome(handle) { connection in for chunk in chunks { connection.send(chunk) } }
                })
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

    /// Opens the store and the listeners and makes the other loops (`threads`). Returns the
    /// listeners' URLs (`ws://HOST:PORT`, `wss://HOST:PORT`) with the ports actually bound.
    public func start(tls: TLSContext?) throws -> [String] {
        precondition(index == 0, "the chat loop starts the server")
        let limit = Socket.raiseFileLimit()
        socketLimit = max(1, min(configuration.maxConnections, limit - Server.reservedDescriptors))
        logger.debug("file descriptor limit \(limit), connections at most \(socketLimit)")
        try openChat()
        let count = min(configuration.threads > 0 ? configuration.threads : LoopThread.availableCores, RoomTable.maxLoops)
        var peers = [self]
        for index in 1..<max(1, count) {
            peers.append(try Server(configuration: configuration, logger: logger, index: index, staticFiles: staticFiles))
        }
        let table = RoomTable()
        for peer in peers { peer.join(peers, rooms: table) }
        logger.debug("\(count) event loop\(count == 1 ? "" : "s")")
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
        scheduleHeartbeat()
        if let redis = configuration.redis {
            cluster = ClusterRooms(
                server: self, url: redis, node: nodeId,
                timeoutMilliseconds: Int(configuration.nodeTimeout * 1000), logger: logger)
            cluster?.start()
            clusterJournal?.start()
        }
        for peer in peers {
            peer.scheduleTick()
            peer.isReady = true
        }
        return urls
    }

    /// Makes `peers` this loop's company: the hand-offs to each of them, and the one chat service
    /// they forward `/ws` to.
    private func join(_ peers: [Server], rooms table: RoomTable) {
        self.peers = peers
        rooms.table = table
        handOffs = peers.map { $0 === self ? nil : HandOff(from: loop, to: $0.loop) }
        chatReaders.chat = peers[0].chat
        if index == 0 { rooms.directory = RoomDirectory(loops: peers.count) }
    }

    /// Runs the chat loop on the calling thread and every other loop on a thread of its own,
    /// until shutdown has finished on all of them; then closes the store.
    public func run() throws {
        defer {
            for thread in threads { thread.join() }
            cluster?.close()
            clusterJournal?.close()
            closeChat()
            // The loops refer to one another; nothing runs any more, so let them go.
            for peer in peers { peer.peers = [] }
        }
        for peer in peers.dropFirst() {
            let running = LoopBound(peer)
            threads.append(try LoopThread {
                do {
                    try running.value.loop.run()
                } catch {
                    running.value.logger.critical("event loop \(running.value.index) failed: \(error)")
                }
            })
        }
        do {
            try loop.run()
        } catch {
            for peer in peers { peer.loop.stop() }
            throw error
        }
    }

    /// Publishes whether this node is in the cluster (its rooms and its history both reach
    /// Redis and are in sync) for every loop's `/readyz`; on the chat loop.
    func updateClusterReadiness() {
        let ready = cluster?.isReady == true && clusterJournal?.isReady != false
        clusterReady.store(ready, ordering: .releasing)
    }

    // MARK: Hand-offs

    /// Runs `body` on loop `index`: at once on this one, after this iteration's hand-off on any
    /// other, behind everything this loop posted there before.
    func post(to index: Int, _ body: @escaping () -> Void) {
        if let handOff = handOffs[index] {
            handOff.post(body)
        } else {
            body()
        }
    }

    /// Runs `body` with the chat loop's server, on the chat loop.
    func onChatLoop(_ body: @escaping (Server) -> Void) {
        let chatLoop = peers[0]
        post(to: 0) { body(chatLoop) }
    }

    /// Runs `body` with `handle`'s connection on the loop it lives on.
    func onHome(_ handle: ConnectionHandle, _ body: @escaping (Connection) -> Void) {
        post(to: handle.home) { body(handle.connection) }
    }

    /// A plain refusal for a client over a connection limit, written once before the close.
    private static let busy = Array(HTTPResponse.error(
        .serviceUnavailable, code: "unavailable", message: "the server is at its connection limit; try again later"
    ).serialize(keepAlive: false))
    private static let tooManyFromAddress = Array(HTTPResponse.error(
        .tooManyRequests, code: "rate_limited", message: "too many connections from your address; close some first"
    ).serialize(keepAlive: false))

    /// A listener accepted `fd` (on the chat loop): checked against the connection limits here,
    /// where they are counted, then given to the loops in turn.
    func accepted(_ fd: Int32, tls context: TLSContext?) {
        let address = ClientAddress.limitKey(Socket.peerAddress(fd))
        let fromAddress = addressCounts[address, default: 0]
        let perAddress = configuration.maxConnectionsPerAddress
        let underLimit = openConnections < socketLimit
        guard underLimit, perAddress == 0 || fromAddress < perAddress else {
            metrics.refusedConnections += 1
            refuse(fd, plain: context == nil, underLimit ? Server.tooManyFromAddress : Server.busy)
            return
        }
        addressCounts[address] = fromAddress + 1
        openConnections += 1
        let target = peers[nextLoop]
        nextLoop = (nextLoop + 1) % peers.count
        post(to: target.index) { target.adopt(fd, address: address, tls: context) }
    }

    /// Takes a connection the chat loop accepted for this loop. A connection that cannot be set
    /// up here is closed and reported like any other close.
    private func adopt(_ fd: Int32, address: String, tls context: TLSContext?) {
        var session: TLSSession?
        if let context {
            do {
                session = try TLSSession(context: context)
            } catch {
                logger.warning("TLS session could not be created: \(error)")
                Socket.close(fd)
                released(address, connection: nil)
                return
            }
        }
        let connection = Connection(fd: fd, owner: self, tls: session, address: address)
        do {
            try loop.register(fd, connection)
        } catch {
            logger.debug("register failed", metadata: ["error": "\(error)"])
            Socket.close(fd)
            released(address, connection: nil)
            return
        }
        connection.slot = connections.count
        connections.append(connection)
    }

    /// A connection from `address` closed on this loop: the chat loop, which counts them, hears
    /// of it (in the next hand-off).
    private func released(_ address: String, connection: ObjectIdentifier?) {
        onChatLoop { chatLoop in chatLoop.countClosed(address, connection: connection) }
    }

    /// On the chat loop: one connection fewer, from `address`; a paused listener may go on,
    /// and an upload admitted for the connection will not come.
    private func countClosed(_ address: String, connection: ObjectIdentifier?) {
        if let connection { admittedUploads[connection] = nil }
        openConnections -= 1
        if let count = addressCounts[address] {
            addressCounts[address] = count > 1 ? count - 1 : nil
        }
        if !pausedListeners.isEmpty { resumeAccepting() }
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
            if !pausedListeners.isEmpty { resumeAccepting() }
        } else {
            released(connection.address, connection: ObjectIdentifier(connection))
        }
        let slot = connection.slot
        guard slot < connections.count, connections[slot] === connection else { return }
        let last = connections.removeLast()
        if slot < connections.count {
            connections[slot] = last
            last.slot = slot
        }
    }

    // MARK: Routing

    /// The endpoint for an upgrade on `route`; `user` is the chat account the request's token
    /// signed in, if any.
    func endpoint(for route: Route, head: HTTPRequestHead, user: String?) -> EndpointChoice {
        switch route {
        case .echo where configuration.echo:
            return .accept(echo)
        case .room(let name):
            guard RoomName.isValid(name) else {
                return .refuse(.error(.badRequest, code: "bad_request",
                                      message: "room names are 1 to 64 characters of A-Z a-z 0-9 . _ -"))
            }
            if !configuration.allowAnonymousRooms && user == nil {
                return .refuse(.error(.unauthorized, code: "unauthorized",
                                      message: "this server needs a valid token: /rooms/\(name)?token=..."))
            }
            return .accept(rooms)
        case .chat:
            if chatReaders.chat != nil { return .accept(chatReaders) }
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
            let clusterReady = configuration.redis == nil || peers.first?.clusterReady.load(ordering: .acquiring) == true
            return isReady && shutdownDeadline == nil && clusterReady
                ? .json(.ok, body: #"{"status":"ready"}"#)
                : .json(.serviceUnavailable, body: #"{"status":"unavailable"}"#)
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

    /// On the chat loop: stops accepting, and has every loop close its WebSockets with 1001 and
    /// stop once they are gone (or after a few seconds). A second signal stops every loop at once.
    func beginShutdown() {
        if shutdownDeadline != nil {
            for peer in peers { peer.loop.stop() }
            return
        }
        for listener in listeners {
            loop.deregister(listener.fd)
            Socket.close(listener.fd)
        }
        listeners.removeAll()
        for peer in peers {
            post(to: peer.index) { peer.shutDown() }
        }
    }

    /// Closes this loop's connections, WebSockets with 1001; the tick stops the loop once they
    /// are gone or the time is up.
    private func shutDown() {
        shutdownDeadline = loop.now + Server.shutdownMilliseconds * 1_000_000
        for connection in connections {
            connection.close(code: .goingAway, reason: "server shutting down")
        }
    }
}
