/// What the event loop calls when a registered file descriptor becomes ready.
///
/// Called on the loop thread only. The socket is registered edge-triggered, so `readable`
/// must read until the read would block (or stop at a budget and ask `EventLoop.readLater`),
/// and `writable` must write until the queue is empty or the socket is full.
public protocol EventHandler: AnyObject {
    /// Data (or end of stream, or an error) is waiting. `hangup` is set when the peer closed or
    /// reset the connection; reading still drains what arrived before.
    func readable(hangup: Bool)
    /// The socket can take more bytes.
    func writable()
}

/// Something with outbound bytes to write at the end of the current loop iteration.
///
/// Batching writes per iteration is what turns a burst of room messages into one `writev`
/// per member instead of one `write` per message.
public protocol Flushable: AnyObject {
    func flush()
}
