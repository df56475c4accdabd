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
    /// The connection's socket is closed: forget the connection.
    func closed(_ connection: Connection)
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
    /// HTTP requests one connection may make (`maxRequestsPerConnection`); the last response
    /// says `Connection: close`.
    var maxRequestsPerConnection = 100
    /// What one readiness event may read from a socket before the loop moves on to the other
    /// sockets and timers and comes back later: bytes, and messages (or HTTP requests) handled.
    /// The bytes equal the loop's read buffer, so a steady reader costs no extra reads.
    var readBudgetBytes = 256 * 1024
    var readBudgetMessages = 64
}
