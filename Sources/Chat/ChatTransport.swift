/// What the chat service needs from the server: deliver JSON, close a client, run slow work
/// off the event loop.
///
/// The service never sees sockets or frames. An event's JSON is serialized once and handed over
/// with the whole recipient list, so the server frames it once (and compresses it once per
/// window size) and queues the same bytes on every recipient: no per-member JSON or framing work.
/// Every method is called on the event loop thread.
public protocol ChatTransport: AnyObject {
    /// The server's handle for one WebSocket connection (the server's `Connection`).
    associatedtype Client: AnyObject

    /// Queues one JSON text message for `client`.
    func send(_ json: [UInt8], to client: Client)

    /// Queues one JSON text message for every client in `clients` except `except`. `arrival`
    /// (monotonic nanoseconds) is when the message it carries arrived, nil for other events.
    func broadcast(_ json: [UInt8], to clients: ContiguousArray<Client>, except: Client?, arrival: UInt64?)

    /// Closes `client` with a WebSocket close code. The server calls `ChatService.closed` for it
    /// (possibly before this returns), so the caller must not touch the client's session after.
    func close(_ client: Client, code: UInt16, reason: String)

    /// Runs `work` on a worker thread, then `then` with its result back on the event loop;
    /// returns false, running nothing, when the workers and their short queue are full.
    ///
    /// Password hashing takes about 100 ms of CPU and must never stall the loop, nor pile up
    /// without bound behind a client that asks for it faster than the cores can hash.
    func performBlocking<T: Sendable>(_ work: @escaping @Sendable () -> T, then: @escaping (T) -> Void) -> Bool
}
