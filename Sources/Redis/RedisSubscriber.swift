import Logging
import Posix

/// A connection in Redis's subscribe mode: the channels a node listens to and the messages
/// published to them.
///
/// The owner says which channels it wants; the subscriber keeps that set across reconnects
/// (subscribing to all of them again on each new connection) and reports each message with its
/// channel. `subscribe`'s `confirmed` runs once Redis has confirmed the subscription, so a
/// caller can wait before relying on it; while Redis is unreachable it runs at once (there is
/// nothing to wait for, and nothing should wait for Redis). A `PING` every `pingInterval`
/// whose answer is more than `replyTimeout` late drops the connection, as `RedisClient` does
/// for a late answer. Confined to its event loop thread.
public final class RedisSubscriber {
    private let connection: RedisConnection
    private let loop: EventLoop
    private let pingInterval: Int
    private let replyTimeout: UInt64
    private var channels: Set<String> = []
    /// Per channel, the `confirmed` closures of subscriptions sent and not yet confirmed,
    /// oldest first: each confirmation answers one.
    private var confirmations: [String: [() -> Void]] = [:]
    /// When the oldest unanswered ping was sent.
    private var pingSentAt: UInt64?
    private var timer: UInt64?

    /// A message published to `channel`.
    public var message: (_ channel: String, _ payload: [UInt8]) -> Void = { _, _ in }
    /// Subscribed again after a reconnect: messages published meanwhile were missed.
    public var ready: () -> Void = {}
    /// The connection was lost (a reconnect is scheduled).
    public var down: () -> Void = {}

    public init(url: RedisURL, loop: EventLoop, logger: Logger, pingIntervalMilliseconds: Int = 1000, replyTimeoutMilliseconds: Int = 5000) {
        self.loop = loop
        self.pingInterval = pingIntervalMilliseconds
        self.replyTimeout = UInt64(replyTimeoutMilliseconds) * 1_000_000
        connection = RedisConnection(url: url, loop: loop, logger: logger, name: "subscriber")
        connection.ready = { [unowned self] in resubscribe() }
        connection.received = { [unowned self] value in push(value) }
        connection.down = { [unowned self] _ in
            lost()
            down()
        }
    }

    public var isReady: Bool { connection.isReady }

    public func start() {
        connection.start()
        schedulePing()
    }

    public func close() {
        if let timer { loop.cancel(timer: timer) }
        timer = nil
        connection.close()
        lost()
    }

    public func subscribe(_ channel: String, confirmed: @escaping () -> Void = {}) {
        channels.insert(channel)
        guard connection.isReady else {
            confirmed()
            return
        }
        confirmations[channel, default: []].append(confirmed)
        connection.send(RESPCommand.encode(["SUBSCRIBE", channel]))
    }

    public func unsubscribe(_ channel: String) {
        guard channels.remove(channel) != nil, connection.isReady else { return }
        connection.send(RESPCommand.encode(["UNSUBSCRIBE", channel]))
    }

    private func resubscribe() {
        pingSentAt = nil
        for channel in channels.sorted() {
            connection.send(RESPCommand.encode(["SUBSCRIBE", channel]))
        }
        ready()
    }

    /// Waiters are let go when the connection is lost: their subscription is made again, without
    /// them, when Redis is back.
    private func lost() {
        pingSentAt = nil
        let released = confirmations
        confirmations = [:]
        for (_, waiting) in released.sorted(by: { $0.key < $1.key }) {
            for confirmed in waiting { confirmed() }
        }
    }

    private func push(_ value: RESPValue) {
        guard case .array(let parts?) = value, let kind = parts.first?.text?.lowercased() else {
            connection.drop("unexpected value in subscribe mode: \(value)")
            return
        }
        switch kind {
        case "message" where parts.count == 3:
            guard let channel = parts[1].text, let payload = parts[2].bytes else { return }
            message(channel, payload)
        case "subscribe" where parts.count == 3:
            guard let channel = parts[1].text, var waiting = confirmations[channel], !waiting.isEmpty else { return }
            let confirmed = waiting.removeFirst()
            confirmations[channel] = waiting.isEmpty ? nil : waiting
            confirmed()
        case "pong":
            pingSentAt = nil
        default:
            break
        }
    }

    private func schedulePing() {
        timer = loop.schedule(afterMilliseconds: pingInterval) { [unowned self] in
            if connection.isReady {
                if let sent = pingSentAt {
                    if loop.now - sent > replyTimeout {
                        connection.drop("no answer to PING within \(replyTimeout / 1_000_000) ms")
                    }
                } else {
                    pingSentAt = loop.now
                    connection.send(RESPCommand.encode(["PING"]))
                }
            }
            schedulePing()
        }
    }
}
