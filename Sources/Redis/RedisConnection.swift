import Bytes
import Logging
import Posix

/// One TCP connection to Redis on an event loop: connects without blocking, says `AUTH` and
/// `SELECT` when the URL asks for them, reads RESP values, writes queued commands in one
/// `writev` per loop iteration, and connects again with a growing delay when the connection
/// fails or Redis closes it.
///
/// It knows nothing of what the commands mean: its owner (`RedisClient`, `RedisSubscriber`)
/// hears `ready` once the handshake is answered, every value after it, and `down` when the
/// connection is lost. Confined to its event loop thread.
public final class RedisConnection: EventHandler, Flushable {
    private enum State {
        /// Not started, or closed for good.
        case idle
        /// `connect` is in progress; the loop reports the socket writable when it is done.
        case connecting(Int32)
        /// `AUTH`/`SELECT` sent; this many answers still to come.
        case handshaking(Int32, remaining: Int)
        case ready(Int32)
        /// Waiting for the reconnect timer.
        case waiting
    }

    public let url: RedisURL
    private let loop: EventLoop
    private let logger: Logger
    private let name: String
    private var state = State.idle
    private var parser = RESPParser()
    private var queue = WriteQueue()
    private var flushPending = false
    private var values: [RESPValue] = []
    /// The next reconnect delay: 100 ms, doubling up to `maxBackoff`, back to 100 ms once a
    /// connection is ready.
    private var backoffMilliseconds = RedisConnection.minBackoff
    private var reconnectTimer: UInt64?
    private var isClosed = false

    static let minBackoff = 100
    static let maxBackoff = 5000

    /// The handshake was answered: commands may be sent.
    public var ready: () -> Void = {}
    /// A value Redis sent after the handshake.
    public var received: (RESPValue) -> Void = { _ in }
    /// The connection was lost (a reconnect is scheduled).
    public var down: (RedisError) -> Void = { _ in }

    public init(url: RedisURL, loop: EventLoop, logger: Logger, name: String) {
        self.url = url
        self.loop = loop
        self.logger = logger
        self.name = name
    }

    public var isReady: Bool {
        if case .ready = state { return true }
        return false
    }

    /// Connects (and keeps connecting until `close`).
    public func start() {
        guard case .idle = state, !isClosed else { return }
        connect()
    }

    /// Queues `command` (encoded RESP) for the next flush; only while `isReady`.
    public func send(_ command: ByteChunk) {
        precondition(isReady, "commands are sent on a ready connection")
        enqueue(command)
    }

    /// Drops the connection as failed (a reply that never came) and connects again later.
    public func drop(_ reason: String) {
        fail(RedisError.unavailable(reason))
    }

    /// Closes the connection for good.
    public func close() {
        isClosed = true
        if let reconnectTimer { loop.cancel(timer: reconnectTimer) }
        reconnectTimer = nil
        if let fd = descriptor {
            loop.deregister(fd)
            Socket.close(fd)
        }
        state = .idle
        queue.removeAll()
    }

    private var descriptor: Int32? {
        switch state {
        case .connecting(let fd), .handshaking(let fd, _), .ready(let fd): fd
        case .idle, .waiting: nil
        }
    }

    private func connect() {
        reconnectTimer = nil
        do {
            let fd = try Socket.connect(host: url.host, port: url.port)
            state = .connecting(fd)
            do {
                try loop.register(fd, self)
            } catch {
                Socket.close(fd)
                state = .waiting
                throw error
            }
        } catch {
            state = .waiting
            fail(RedisError.unavailable("\(error)"))
        }
    }

    private func enqueue(_ command: ByteChunk) {
        queue.append(command)
        if !flushPending {
            flushPending = true
            loop.flushLater(self)
        }
    }

    public func flush() {
        flushPending = false
        guard let fd = descriptor, !queue.isEmpty else { return }
        if case .connecting = state { return }
        do {
            _ = try queue.flush(to: fd, vectors: loop.vectors)
        } catch {
            fail(RedisError.unavailable("\(error)"))
        }
    }

    public func writable() {
        if case .connecting(let fd) = state {
            connected(fd)
        } else {
            flush()
        }
    }

    public func readable(hangup: Bool) {
        if case .connecting(let fd) = state {
            // A refused connect reports an error (and hang-up) rather than writability.
            connected(fd)
        }
        while let fd = descriptor {
            let count: Int?
            do {
                count = try Socket.read(fd, into: loop.readBuffer)
            } catch {
                fail(RedisError.unavailable("\(error)"))
                return
            }
            guard let count else { return }
            guard count > 0 else {
                fail(RedisError.unavailable("Redis closed the connection"))
                return
            }
            do {
                try parser.receive(UnsafeRawBufferPointer(rebasing: loop.readBuffer[0..<count]), into: &values)
            } catch {
                fail(RedisError.unavailable("\(error)"))
                return
            }
            deliver()
        }
    }

    /// The non-blocking connect finished: on success, the handshake begins.
    private func connected(_ fd: Int32) {
        if let error = Socket.pendingError(fd, call: "connect(\(url.host):\(url.port))") {
            fail(RedisError.unavailable("\(error)"))
            return
        }
        var handshake = 0
        if let password = url.password {
            enqueue(RESPCommand.encode(url.user.map { ["AUTH", $0, password] } ?? ["AUTH", password]))
            handshake += 1
        }
        if url.database != 0 {
            enqueue(RESPCommand.encode(["SELECT", String(url.database)]))
            handshake += 1
        }
        if handshake == 0 {
            becomeReady(fd)
        } else {
            state = .handshaking(fd, remaining: handshake)
        }
    }

    private func becomeReady(_ fd: Int32) {
        state = .ready(fd)
        backoffMilliseconds = RedisConnection.minBackoff
        logger.info("connected to Redis", metadata: ["connection": "\(name)", "redis": "\(url)"])
        ready()
    }

    private func deliver() {
        guard !values.isEmpty else { return }
        let batch = values
        values.removeAll(keepingCapacity: true)
        for value in batch {
            switch state {
            case .handshaking(let fd, let remaining):
                if case .error(let message) = value {
                    fail(RedisError.reply(message))
                    return
                }
                if remaining == 1 { becomeReady(fd) } else { state = .handshaking(fd, remaining: remaining - 1) }
            case .ready:
                received(value)
            case .idle, .connecting, .waiting:
                return
            }
        }
    }

    private func fail(_ error: RedisError) {
        if let fd = descriptor {
            loop.deregister(fd)
            Socket.close(fd)
        }
        let wasUp = isReady
        state = .waiting
        parser = RESPParser()
        queue.removeAll()
        values.removeAll()
        guard !isClosed else { return }
        if wasUp {
            logger.warning("lost Redis", metadata: ["connection": "\(name)", "error": "\(error)"])
        } else if case .reply = error {
            // A refused AUTH or SELECT is the operator's to fix: it is said at every attempt.
            logger.warning("Redis refused the handshake", metadata: ["connection": "\(name)", "error": "\(error)"])
        } else {
            logger.debug("Redis not reachable", metadata: ["connection": "\(name)", "error": "\(error)"])
        }
        down(error)
        let delay = backoffMilliseconds
        backoffMilliseconds = min(backoffMilliseconds * 2, RedisConnection.maxBackoff)
        reconnectTimer = loop.schedule(afterMilliseconds: delay) { [weak self] in self?.connect() }
    }
}
