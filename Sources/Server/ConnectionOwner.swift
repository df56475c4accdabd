import HTTP
import Logging
import Posix

/// What a connection needs from the server that accepted it.
///
/// The server is the owner in production; a test can be one with a socketpair, its own event loop
/// and a clock it moves by hand. Called on the event loop thread.
protocol ConnectionOwner: AnyObject {
    var loop: EventLoop { get }
    /// The current time in monotonic nanoseconds (the loop's clock, or a test's).
    var now: UInt64 { get }
    var limits: ConnectionLimits { get }
    var metrics: Metrics { get }
    var logger: Logger { get }
    /// Where a TLS 1.2 connection gathers its queued frames for one `SSL_write` at the flush;
    /// shared because the loop runs one flush at a time.
    var tlsScratch: UnsafeMutableRawBufferPointer { get }

    /// A complete request (with its body, empty without one) arrived while the connection
    /// speaks HTTP: answer it with `Connection.send(_:keepAlive:)` (after
    /// `Connection.deferResponse()` when the answer must wait), `Connection.stream(_:to:)` or
    /// `Connection.upgrade(_:to:head:compression:)`.
    func respond(to head: HTTPRequestHead, body: [UInt8], on connection: Connection)
    /// A request head announces a body: how much of it may be read, and by when, or the
    /// answer that refuses it unread. Asked before a byte of the body is kept.
    func admitBody(of head: HTTPRequestHead, on connection: Connection) -> BodyAdmission
    /// The connection's socket is closed: forget the connection.
    func closed(_ connection: Connection)
}

extension ConnectionOwner {
    /// Every body may take `ConnectionLimits.maxBodyBytes`, within the request's deadline.
    func admitBody(of head: HTTPRequestHead, on connection: Connection) -> BodyAdmission {
        .read(maxBytes: limits.maxBodyBytes, deadline: nil)
    }
}

/// What the owner decides about a request body from its head (`ConnectionOwner.admitBody`).
enum BodyAdmission {
    /// Read at most `maxBytes` (`413` past that); with a `deadline` (loop time), the body may
    /// take until then instead of the handshake timeout, and a body still arriving at that
    /// moment gets `408`.
    case read(maxBytes: Int, deadline: UInt64?)
    /// As `read`, once the owner says so: until `Connection.releaseBody` (or
    /// `Connection.refuseBody`) the socket is not read, so no more of the body is taken in than
    /// arrived with the head.
    case hold(maxBytes: Int, deadline: UInt64?)
    /// Read none of it: answer with this response and close.
    case refuse(HTTPResponse)
}

/// The limits every connection of a server enforces.
struct ConnectionLimits {
    var timeouts: ConnectionLifecycle.Timeouts
    /// Bytes that may wait for a peer before it is closed as a slow consumer.
    var outboundBytes: Int
    /// The largest WebSocket message a peer may send.
    var maxMessageSize: Int
    /// The largest request head (request line and headers); larger ones get `431`.
    var maxHeadBytes = 8192
    /// The largest request body (the publish API's JSON); larger ones get `413`.
    var maxBodyBytes = 64 * 1024
    /// Bytes that may wait for a peer while it speaks HTTP: at least the largest response, a
    /// media file with its head, which a reader that keeps up still only takes bit by bit.
    var httpOutboundBytes = 4 << 20
    /// HTTP requests one connection may make (`maxRequestsPerConnection`); the last response
    /// says `Connection: close`.
    var maxRequestsPerConnection = 100
    /// What one readiness event may read from a socket before the loop moves on to the other
    /// sockets and timers and comes back later: bytes, and messages (or HTTP requests) handled.
    /// The bytes equal the loop's read buffer, so a steady reader costs no extra reads.
    var readBudgetBytes = 256 * 1024
    var readBudgetMessages = 64
    /// Bytes of compressed messages one readiness event may inflate; an unfinished message
    /// goes on when the loop comes back. zlib inflates a zip bomb (distance-1 matches) at
    /// about 0.55 MB a millisecond here, so a bomb's megabyte is 16 steps of about 0.1 ms with
    /// every other socket served in between, instead of one stretch of 2 to 8 ms.
    var inflationBudgetBytes = 64 * 1024
    /// Pings a peer may send in one second; one more closes it with 1008. Clients ping every
    /// few seconds at most; a flood of them costs a frame parse each (the soak under attack
    /// measured 42% of the server's core for one flooder that read its pongs slowly).
    var maxPingsPerSecond = 100
}
