import Bytes
import Crypto
import Dispatch
import Logging
import Posix
import Synchronization

/// Batched, signed `POST`s of events to an operator's URL: presence changes (the presence
/// webhook) or stored messages for members who are offline (the offline-delivery webhook).
///
/// The event loop only appends an event to a bounded queue under a mutex: it never waits on
/// the network. The HTTP client runs on a worker thread (a serial dispatch queue) with a blocking
/// socket, each step bounded by a timeout. That is the choice made over a client on the event
/// loop: webhooks are a trickle next to the traffic, a blocking client is a few dozen lines
/// (`BlockingExchange`) where a non-blocking one would be a second connection state machine,
/// and a receiver that hangs ties up one worker, not the loop. Only `http://` URLs are spoken;
/// a receiver behind TLS sits behind a local proxy.
///
/// Delivery: the worker waits `lingerMilliseconds` after the first event, then posts up to
/// `maxBatch` queued events as `{"events":[...]}`. A failure (no connection, a timeout, a status
/// other than 2xx) is retried with the same events, the delay doubling from `firstRetryMilliseconds`
/// up to `maxRetryMilliseconds`; meanwhile new events queue up to `queueLimit`, and past it they
/// are dropped and counted. Events are delivered at least once (a retry after a lost answer
/// repeats a batch) and in order. Each request is signed (`signature(body:timestamp:secret:)`).
///
/// `@unchecked Sendable`: `state` is behind a mutex; the rest is immutable.
final class Webhook: @unchecked Sendable {
    let target: WebhookTarget
    private let secret: [UInt8]
    private let queueLimit: Int
    private let logger: Logger
    private let worker = DispatchQueue(label: "switchboard.webhook")
    private let state = Mutex(State())

    static let maxBatch = 100
    static let lingerMilliseconds = 100
    static let firstRetryMilliseconds = 250
    static let maxRetryMilliseconds = 5000
    static let timeoutMilliseconds = 5000

    /// What the loop and the worker share.
    struct State {
        var queue: [[UInt8]] = []
        var queueHead = 0
        /// Whether the worker has a batch in hand or scheduled.
        var delivering = false
        var statistics = Statistics()
    }

    /// Counts for `/metrics`.
    struct Statistics: Sendable {
        var queued = 0
        var delivered = 0
        var dropped = 0
        var failedAttempts = 0
        var waiting = 0
    }

    init(target: WebhookTarget, secret: [UInt8], queueLimit: Int, logger: Logger) {
        self.target = target
        self.secret = secret
        self.queueLimit = queueLimit
        self.logger = logger
    }

    var statistics: Statistics {
        state.withLock { state in
            var statistics = state.statistics
            statistics.waiting = state.queue.count - state.queueHead
            return statistics
        }
    }

    /// Queues `{"type":"<type>","at":<ms>,"data":<json>}`; drops it when the queue is full.
    /// Called on the loop thread; takes the mutex for an append.
    func enqueue(_ json: [UInt8], type: String) {
        var event = Array(#"{"type":"\#(type)","at":\#(SystemClock.epochMilliseconds()),"data":"#.utf8)
        event.append(contentsOf: json)
        event.append(UInt8(ascii: "}"))
        let start = state.withLock { state -> Bool in
            guard state.queue.count - state.queueHead < queueLimit else {
                state.statistics.dropped += 1
                return false
            }
            state.queue.append(event)
            state.statistics.queued += 1
            guard !state.delivering else { return false }
            state.delivering = true
            return true
        }
        if start {
            worker.asyncAfter(deadline: .now() + .milliseconds(Webhook.lingerMilliseconds)) { self.deliverNext() }
        }
    }

    /// Takes the next batch, or stops when the queue is empty.
    private func deliverNext() {
        let batch = state.withLock { state -> [[UInt8]] in
            let end = min(state.queue.count, state.queueHead + Webhook.maxBatch)
            let batch = Array(state.queue[state.queueHead..<end])
            state.queueHead = end
            if state.queueHead == state.queue.count {
                state.queue.removeAll(keepingCapacity: true)
                state.queueHead = 0
            }
            if batch.isEmpty { state.delivering = false }
            return batch
        }
        guard !batch.isEmpty else { return }
        attempt(Webhook.body(batch), count: batch.count, retry: Webhook.firstRetryMilliseconds)
    }

    private func attempt(_ body: [UInt8], count: Int, retry: Int) {
        let failure = post(body)
        state.withLock { state in
            if failure == nil {
                state.statistics.delivered += count
            } else {
                state.statistics.failedAttempts += 1
            }
        }
        guard let failure else { return deliverNext() }
        logger.debug("webhook delivery failed; retrying", metadata: [
            "host": "\(target.host)", "reason": "\(failure)", "retryMilliseconds": "\(retry)",
        ])
        worker.asyncAfter(deadline: .now() + .milliseconds(retry)) {
            self.attempt(body, count: count, retry: min(2 * retry, Webhook.maxRetryMilliseconds))
        }
    }

    /// Posts `body` once; nil on a 2xx answer, else why not.
    private func post(_ body: [UInt8]) -> String? {
        let timestamp = SystemClock.epochMilliseconds() / 1000
        var request = Array("""
            POST \(target.path) HTTP/1.1\r
            Host: \(target.hostHeader)\r
            User-Agent: switchboard\r
            Content-Type: application/json\r
            Content-Length: \(body.count)\r
            X-Switchboard-Timestamp: \(timestamp)\r
            X-Switchboard-Signature: sha256=\(Webhook.signature(body: body, timestamp: timestamp, secret: secret))\r
            Connection: close\r
            \r

            """.utf8)
        request.append(contentsOf: body)
        do {
            let status = try BlockingExchange.firstLine(
                of: request, host: target.host, port: target.port, timeoutMilliseconds: Webhook.timeoutMilliseconds)
            let parts = status.split(separator: " ")
            guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1].hasPrefix("2"), parts[1].count == 3 else {
                return "answered \(status)"
            }
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// `{"events":[<event>,...]}`.
    static func body(_ events: [[UInt8]]) -> [UInt8] {
        var body = Array(#"{"events":["#.utf8)
        for (index, event) in events.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body.append(contentsOf: event)
        }
        body.append(contentsOf: "]}".utf8)
        return body
    }

    /// Lowercase hex of HMAC-SHA256(secret, "<timestamp>.<body>"): what the
    /// `X-Switchboard-Signature: sha256=...` header carries. The timestamp is signed with the
    /// body so a receiver that rejects old timestamps cannot be fed a replayed request.
    static func signature(body: [UInt8], timestamp: Int64, secret: [UInt8]) -> String {
        var message = Array("\(timestamp).".utf8)
        message.append(contentsOf: body)
        let digits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        for byte in Crypto.hmacSHA256(key: secret, message: message) {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: hex, as: UTF8.self)
    }
}

/// Where a webhook posts: an `http://host[:port][/path]` URL, taken apart.
public struct WebhookTarget: Sendable, Equatable {
    public let host: String
    public let port: Int
    public let path: String

    /// Nil unless `url` is `http://` with a host (IPv6 in brackets), an optional port from 1 to
    /// 65535 and an optional path without spaces or control characters.
    public init?(_ url: String) {
        guard url.hasPrefix("http://") else { return nil }
        let rest = url.dropFirst("http://".count)
        let authority = rest.prefix { $0 != "/" }
        let path = rest.dropFirst(authority.count)
        guard path.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }), !authority.isEmpty else { return nil }
        var host = Substring(authority)
        var port = 80
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return nil }
            let after = host[host.index(after: close)...]
            host = host[host.index(after: host.startIndex)..<close]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let number = Int(after.dropFirst()) else { return nil }
                port = number
            }
        } else if let colon = host.lastIndex(of: ":") {
            guard let number = Int(host[host.index(after: colon)...]) else { return nil }
            port = number
            host = host[..<colon]
        }
        guard !host.isEmpty, (1...65535).contains(port),
              host.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "@") })
        else { return nil }
        self.host = String(host)
        self.port = port
        self.path = path.isEmpty ? "/" : String(path)
    }

    /// The `Host` header: the host, bracketed when IPv6, and the port unless it is 80.
    var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == 80 ? name : "\(name):\(port)"
    }
}

/// A webhook setting that cannot work, found at start.
public struct WebhookError: Error, CustomStringConvertible {
    public let description: String
}
