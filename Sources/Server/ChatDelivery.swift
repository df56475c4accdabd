import Chat
import Deflate
import Dispatch
import Posix
import WebSocket

/// The chat service's transport, on the chat loop: it delivers the service's JSON to
/// connections on every loop and runs password hashing on worker threads.
///
/// A reply to a connection on the chat loop is queued at once; one to a connection elsewhere
/// goes in the next hand-off to its loop. An event for a group is framed here once and handed
/// to each loop with members in one piece (the recipients of that loop with it), so every
/// subscriber gets the service's events in the one order the service made them. Confined to
/// the chat loop.
final class ChatDelivery: ChatTransport {
    typealias Client = ConnectionHandle

    unowned let server: Server
    /// The server's loop index and metrics, read on every reply without going through the
    /// unowned reference (a check and a retain each time).
    private let index: Int
    private let metrics: Metrics
    /// Set right after init (the service needs this transport to exist first).
    private(set) var service: ChatService<ChatDelivery>?
    /// Password hashes in flight: at most one per core, each ~100 ms of CPU.
    let workers: Int
    /// Hashes waiting for a worker; beyond `queueLimit` a request is refused (`rate_limited`)
    /// rather than queued behind a flood, so a real login waits at most a second or so.
    private var queued: [() -> Void] = []
    private var queuedHead = 0
    let queueLimit: Int
    private var running = 0

    init(server: Server, workers: Int = LoopThread.availableCores) {
        self.server = server
        self.index = server.index
        self.metrics = server.metrics
        self.workers = workers
        self.queueLimit = 4 * workers
        ChatDelivery.startDispatch()
    }

    /// Runs one empty job on the queue hashes use, then one timer, and waits for each.
    /// libdispatch opens its epoll and eventfd descriptors at its first job, and its manager
    /// thread the timer descriptor when a timer is first armed (the worker pool's monitor arms
    /// one after the first job, at a moment of its own), and traps when it cannot, so the first
    /// password hash at the descriptor limit (the soak under attack reached it) would take the
    /// process down; at start there are descriptors to spare. The timer of our own makes the
    /// manager's descriptor exist before the server listens.
    private static func startDispatch() {
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async { done.signal() }
        done.wait()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(1)) { done.signal() }
        done.wait()
    }

    func attach(_ service: ChatService<ChatDelivery>) {
        self.service = service
    }

    func send(_ json: [UInt8], to client: ConnectionHandle) {
        metrics.messagesSent[.chat] += 1
        // A connection of this loop is written to at once, without the closures a hand-off needs.
        guard client.home != index else { return ChatDelivery.send(json, to: client.connection) }
        server.onHome(client) { connection in ChatDelivery.send(json, to: connection) }
    }

    private static func send(_ json: [UInt8], to connection: Connection) {
        var message = OutgoingMessage(.text, payload: json)
        connection.send(&message)
    }

    /// Frames `json` once (and compresses it once per window size and loop) for every recipient.
    func broadcast(_ json: [UInt8], to clients: ContiguousArray<ConnectionHandle>, except: ConnectionHandle?, arrival: UInt64?) {
        var message = OutgoingMessage(.text, payload: json)
        var elsewhere: [ContiguousArray<ConnectionHandle>] = []
        var count = 0
        for client in clients where client !== except {
            count += 1
            if client.home == index {
                ChatDelivery.deliver(&message, to: client.connection, arrival: arrival)
                continue
            }
            if elsewhere.isEmpty { elsewhere = Array(repeating: [], count: server.peers.count) }
            elsewhere[client.home].append(client)
        }
        metrics.messagesSent[.chat] += count
        guard !elsewhere.isEmpty else { return }
        let shared = message.forAnotherLoop()
        for (home, recipients) in elsewhere.enumerated() where !recipients.isEmpty {
            server.post(to: home) {
                var message = shared
                for client in recipients { ChatDelivery.deliver(&message, to: client.connection, arrival: arrival) }
            }
        }
    }

    private static func deliver(_ message: inout OutgoingMessage, to connection: Connection, arrival: UInt64?) {
        if let arrival {
            connection.deliver(&message, arrivedAt: arrival)
        } else {
            connection.send(&message)
        }
    }

    func close(_ client: ConnectionHandle, code: UInt16, reason: String) {
        metrics.countClose(CloseCode(rawValue: code))
        server.onHome(client) { connection in connection.fail(code: CloseCode(rawValue: code), reason: reason) }
    }

    func performBlocking<T: Sendable>(_ work: @escaping @Sendable () -> T, then: @escaping (T) -> Void) -> Bool {
        let loop = server.loop
        let completion = LoopBound((then, self))
        let job = {
            DispatchQueue.global().async {
                let result = work()
                loop.execute {
                    let (then, delivery) = completion.value
                    delivery.workerFinished()
                    then(result)
                }
            }
        }
        if running < workers {
            running += 1
            job()
            return true
        }
        guard queued.count - queuedHead < queueLimit else { return false }
        queued.append(job)
        return true
    }

    private func workerFinished() {
        running -= 1
        guard queuedHead < queued.count else { return }
        let next = queued[queuedHead]
        queuedHead += 1
        if queuedHead == queued.count {
            queued.removeAll(keepingCapacity: true)
            queuedHead = 0
        }
        running += 1
        next()
    }
}

/// A value that crosses threads only to be used on one thread: back on the loop that made it
/// (a worker's result), or on the thread a loop is started on.
///
/// @unchecked Sendable: one thread at a time uses the value; the others only carry it through
/// `EventLoop.execute` or a thread's start.
final class LoopBound<Value>: @unchecked Sendable {
    let value: Value

    init(_ value: Value) {
        self.value = value
    }
}
