import Logging
import Posix

/// Commands to Redis and their answers, in order, over one pipelined connection on an event
/// loop.
///
/// Each command's answer comes back through its own closure, on the loop thread: the value,
/// `.reply` when Redis answered with an error, or `.unavailable` when there is no connection
/// (the command is then not sent: nothing is retried behind the caller's back) or the
/// connection was lost before the answer came. A Redis that stops answering (stopped, or a
/// network that drops packets without a reset) is noticed by the oldest answer being more than
/// `replyTimeout` late: the connection is dropped, every waiting command fails, and a new one is
/// made. Confined to its event loop thread.
public final class RedisClient {
    public typealias Reply = (Result<RESPValue, RedisError>) -> Void

    private let connection: RedisConnection
    private let loop: EventLoop
    private let replyTimeout: UInt64
    /// Closures of the commands sent and not answered yet, oldest first from `head`, with the
    /// loop time each was sent at.
    private var waiting: [(reply: Reply, sentAt: UInt64)] = []
    private var head = 0
    private var watchdog: UInt64?

    /// The connection is ready (again): commands may be sent.
    public var ready: () -> Void = {}
    /// The connection was lost; commands fail with `.unavailable` until `ready`.
    public var down: (RedisError) -> Void = { _ in }

    public init(url: RedisURL, loop: EventLoop, logger: Logger, name: String = "commands", replyTimeoutMilliseconds: Int = 5000) {
        self.loop = loop
        self.replyTimeout = UInt64(replyTimeoutMilliseconds) * 1_000_000
        connection = RedisConnection(url: url, loop: loop, logger: logger, name: name)
        connection.ready = { [unowned self] in ready() }
        connection.received = { [unowned self] value in answer(value) }
        connection.down = { [unowned self] error in lost(error) }
    }

    public var isReady: Bool { connection.isReady }

    /// Commands sent and not answered yet.
    public var waitingCount: Int { waiting.count - head }

    public func start() {
        connection.start()
        scheduleWatchdog()
    }

    public func close() {
        if let watchdog { loop.cancel(timer: watchdog) }
        watchdog = nil
        connection.close()
        lost(.unavailable("the client was closed"))
    }

    /// Sends `arguments` as one command; `reply` hears its answer.
    public func send(_ arguments: [[UInt8]], reply: @escaping Reply = { _ in }) {
        guard connection.isReady else {
            reply(.failure(.unavailable("not connected to \(connection.url)")))
            return
        }
        waiting.append((reply, loop.now))
        connection.send(RESPCommand.encode(arguments))
    }

    public func send(_ arguments: [String], reply: @escaping Reply = { _ in }) {
        send(arguments.map { Array($0.utf8) }, reply: reply)
    }

    private func answer(_ value: RESPValue) {
        guard head < waiting.count else {
            connection.drop("an answer came to no command")
            return
        }
        let reply = waiting[head].reply
        head += 1
        if head == waiting.count {
            waiting.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 1024 && head * 2 > waiting.count {
            waiting.removeFirst(head)
            head = 0
        }
        if case .error(let message) = value {
            reply(.failure(.reply(message)))
        } else {
            reply(.success(value))
        }
    }

    private func lost(_ error: RedisError) {
        let failed = waiting[head...]
        waiting = []
        head = 0
        for entry in failed { entry.reply(.failure(error)) }
        down(error)
    }

    private func scheduleWatchdog() {
        watchdog = loop.schedule(afterMilliseconds: 250) { [unowned self] in
            if head < waiting.count, loop.now - waiting[head].sentAt > replyTimeout {
                connection.drop("no answer within \(replyTimeout / 1_000_000) ms")
            }
            scheduleWatchdog()
        }
    }
}
