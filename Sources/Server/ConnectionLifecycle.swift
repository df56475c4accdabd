import WebSocket

/// The life of one connection, from its first HTTP byte to the closed socket, as one state
/// machine: every transition returns what the connection must do, and the connection does the
/// I/O. Pure: time comes in as an argument, so tests drive it with a clock of their own.
///
/// ```
/// http ──streamed──▶ streaming ──close(code) or finish()──▶ closing(flushing) + finishWriting
/// http ──upgraded──▶ open
///   │                 │ close(code)      ─▶ closing(flushing) + sendClose
///   │                 │ finish()         ─▶ closing(flushing) + finishWriting
///   └─ finish() ──────┴─────────────────▶ closing(flushing) ─flushed()─▶ closing(shut) ─▶ closed
/// any ─ended() (end of stream, socket error, deadline)─────────────────────────────────▶ closed
/// ```
///
/// An open connection is closed with 1001 after `idle` of silence, and with 1008 after `idle`
/// during which the socket refused our bytes (it sends but never reads: pings keep it
/// talking, not listening). An HTTP connection closes after `maxRequests` responses.
struct ConnectionLifecycle {
    enum State: Equatable {
        /// Reading HTTP requests (the TLS handshake included) until `deadline`, counted from
        /// accept and again after each keep-alive response, not from the last byte heard, so a
        /// client trickling a byte at a time cannot hold the connection open.
        case http(deadline: UInt64)
        /// An open WebSocket.
        case open
        /// A response streamed after its head (Server-Sent Events). No deadline and no pings:
        /// the server writes (a heartbeat at least), so a vanished peer shows as a failed write.
        case streaming
        /// A close was decided. While `flushing`, queued bytes are still written; then our side
        /// is shut and we wait, until `deadline`, for the peer's end of stream (or its close
        /// reply), so the kernel never turns unread data into a reset that would destroy our
        /// close frame.
        case closing(deadline: UInt64, flushing: Bool)
        case closed
    }

    /// What the connection must do after a transition.
    enum Action: Equatable {
        case none
        /// Leave the endpoint, queue a close frame with this code, write what is queued.
        case sendClose(CloseCode, reason: String)
        /// Leave the endpoint (if any) and write what is queued; `flushed()` follows.
        case finishWriting
        /// Everything is written: end TLS (close_notify) and shut our side of the socket.
        case shutDownWrite
        /// Leave the endpoint (if any) and close the socket now, dropping anything queued.
        case closeSocket
        /// Queue a ping: the peer has been silent for a ping interval.
        case sendPing
    }

    /// The durations the machine enforces, in nanoseconds.
    struct Timeouts: Equatable {
        /// For a complete request after accept or after a keep-alive response.
        var handshake: UInt64
        /// Silence after which an open WebSocket is closed with 1001.
        var idle: UInt64
        /// Silence after which an open WebSocket is pinged, and the gap between pings.
        var ping: UInt64
        /// How long a closing connection may take to finish the closing handshake.
        var close: UInt64
    }

    private(set) var state: State
    let timeouts: Timeouts
    /// When the peer last sent anything; silence is measured from here.
    private(set) var lastHeard: UInt64
    private var lastPing: UInt64 = 0
    /// Since when the socket has refused bytes we have for the peer (nil while it takes them
    /// all): a peer that keeps sending but never reads is not idle, yet it is not listening.
    private(set) var stalledSince: UInt64?
    /// How many HTTP requests one connection may make before it must reconnect, so a
    /// keep-alive connection cannot be renewed forever.
    let maxRequests: Int
    private(set) var responses = 0

    init(now: UInt64, timeouts: Timeouts, maxRequests: Int = 100) {
        self.timeouts = timeouts
        self.state = .http(deadline: now + timeouts.handshake)
        self.lastHeard = now
        self.maxRequests = maxRequests
    }

    /// Whether the connection may still queue bytes for the peer: before any close was decided.
    var acceptsOutput: Bool {
        switch state {
        case .http, .open, .streaming: true
        case .closing, .closed: false
        }
    }

    /// Whether queued bytes may still go to the socket (not after our side was shut).
    var writes: Bool {
        switch state {
        case .http, .open, .streaming, .closing(_, flushing: true): true
        case .closing(_, flushing: false), .closed: false
        }
    }

    var isOpen: Bool { state == .open }
    /// Whether requests are still being read and answered (not upgraded, streaming or closing).
    var isHTTP: Bool {
        if case .http = state { return true }
        return false
    }
    var isClosed: Bool { state == .closed }

    /// The peer sent bytes.
    mutating func heard(at now: UInt64) {
        lastHeard = now
    }

    /// Whether the response about to be queued may keep the connection: not the last request
    /// allowed on it.
    var mayKeepAlive: Bool { responses + 1 < maxRequests }

    /// The socket refused some of our bytes.
    mutating func refused(now: UInt64) {
        if stalledSince == nil { stalledSince = now }
    }

    /// The socket took everything queued.
    mutating func drained() {
        stalledSince = nil
    }

    /// An HTTP response was queued; with keep-alive the next request has a new deadline.
    mutating func responded(keepAlive: Bool, now: UInt64) -> Action {
        guard case .http = state else { return .none }
        responses += 1
        guard keepAlive else { return finish(now: now) }
        state = .http(deadline: now + timeouts.handshake)
        return .none
    }

    /// The upgrade response was queued: the WebSocket is open.
    mutating func upgraded(now: UInt64) {
        guard case .http = state else { return }
        state = .open
        lastPing = now
    }

    /// The head of a streamed response was queued: the stream is open.
    mutating func streamed() {
        guard case .http = state else { return }
        state = .streaming
    }

    /// The server closes (shutdown 1001, slow consumer 1008, idle timeout): an open WebSocket
    /// starts the closing handshake, a stream ends once what is queued is written (or the close
    /// deadline passes), a connection still in HTTP is simply dropped.
    mutating func close(_ code: CloseCode, reason: String, now: UInt64) -> Action {
        switch state {
        case .open:
            state = .closing(deadline: now + timeouts.close, flushing: true)
            return .sendClose(code, reason: reason)
        case .streaming:
            return finish(now: now)
        case .http:
            state = .closed
            return .closeSocket
        case .closing, .closed:
            return .none
        }
    }

    /// The conversation is over once what is queued is written: a response without keep-alive,
    /// a failed request, the WebSocket layer's `.closeConnection`, a TLS failure.
    ///
    /// While closing, it reports the peer's close reply: once our side is shut, nothing is left
    /// to wait for and the socket closes (RFC 6455 §7.1.1: the server closes TCP first).
    mutating func finish(now: UInt64) -> Action {
        switch state {
        case .http, .open, .streaming:
            state = .closing(deadline: now + timeouts.close, flushing: true)
            return .finishWriting
        case .closing(_, flushing: false):
            state = .closed
            return .closeSocket
        case .closing(_, flushing: true), .closed:
            return .none
        }
    }

    /// Everything queued was written.
    mutating func flushed() -> Action {
        guard case .closing(let deadline, flushing: true) = state else { return .none }
        state = .closing(deadline: deadline, flushing: false)
        return .shutDownWrite
    }

    /// The peer ended the stream, or the socket failed: nothing more can be said either way.
    mutating func ended() -> Action {
        guard state != .closed else { return .none }
        state = .closed
        return .closeSocket
    }

    /// The periodic check: handshake and idle timeouts, pings, close timeouts.
    mutating func tick(now: UInt64) -> Action {
        switch state {
        case .http(let deadline), .closing(let deadline, _):
            guard now > deadline else { return .none }
            state = .closed
            return .closeSocket
        case .open:
            let silence = now - min(lastHeard, now)
            if silence > timeouts.idle {
                return close(.goingAway, reason: "idle timeout", now: now)
            }
            if let stalledSince, now - min(stalledSince, now) > timeouts.idle {
                return close(.policyViolation, reason: "not reading", now: now)
            }
            if silence >= timeouts.ping && now - min(lastPing, now) >= timeouts.ping {
                lastPing = now
                return .sendPing
            }
            return .none
        case .streaming:
            // A stream's reader is judged like a WebSocket's: refusing our bytes for `idle`.
            if let stalledSince, now - min(stalledSince, now) > timeouts.idle {
                return finish(now: now)
            }
            return .none
        case .closed:
            return .none
        }
    }
}
