import Chat
import Deflate
import Dispatch
import Glibc
import HTTP
import Posix
import WebSocket

/// `/ws`: the JSON chat protocol, handed to `ChatService`; this class is its transport.
///
/// A token in the upgrade URL (`/ws?token=...`) signs the connection in at once; an invalid
/// one does not refuse the upgrade, the connection just starts signed out (it can still
/// `auth`, `login` or `signup`), because a browser cannot read the body of a refused upgrade
/// and an error reply over the socket says more. Confined to the event loop thread.
final class ChatEndpoint: Endpoint, ChatTransport {
    typealias Client = Connection

    unowned let server: Server
    /// Set right after init (the service needs this transport to exist first).
    private(set) var service: ChatService<ChatEndpoint>?
    /// Password hashes in flight: at most one per core, each ~100 ms of CPU.
    let workers: Int
    /// Hashes waiting for a worker; beyond `queueLimit` a request is refused (`rate_limited`)
    /// rather than queued behind a flood, so a real login waits at most a second or so.
    private var queued: [() -> Void] = []
    private var queuedHead = 0
    let queueLimit: Int
    private var running = 0

    init(server: Server, workers: Int = Int(max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))))) {
        self.server = server
        self.workers = workers
        self.queueLimit = 4 * workers
    }

    func attach(_ service: ChatService<ChatEndpoint>) {
        self.service = service
    }

    // MARK: Endpoint

    func session(for connection: Connection, head: HTTPRequestHead) -> Session {
        .reader(Reader(connection, endpoint: self, token: head.query["token"]))
    }

    /// One `/ws` connection; what the service keeps for it is in the service (`ChatSession`).
    final class Reader: ReaderSession {
        unowned let connection: Connection
        unowned let endpoint: ChatEndpoint
        private let token: String?

        init(_ connection: Connection, endpoint: ChatEndpoint, token: String?) {
            self.connection = connection
            self.endpoint = endpoint
            self.token = token
        }

        var kind: EndpointKind { .chat }

        func opened() {
            endpoint.service?.opened(connection, token: token, address: connection.address)
        }

        func received(_ opcode: Opcode, payload: [UInt8]) {
            if opcode == .text {
                endpoint.service?.received(connection, text: payload)
            } else {
                endpoint.service?.receivedBinary(connection)
            }
        }

        func closed() {
            endpoint.service?.closed(connection)
        }
    }

    // MARK: ChatTransport

    func send(_ json: [UInt8], to client: Connection) {
        var message = OutgoingMessage(.text, payload: json)
        client.send(&message)
        server.metrics.messagesSent[.chat] += 1
    }

    /// Frames `json` once (and compresses it once per window size) for every recipient.
    func broadcast(_ json: [UInt8], to clients: ContiguousArray<Connection>, except: Connection?, arrival: UInt64?) {
        var message = OutgoingMessage(.text, payload: json)
        var count = 0
        for client in clients where client !== except {
            if let arrival {
                client.deliver(&message, arrivedAt: arrival)
            } else {
                client.send(&message)
            }
            count += 1
        }
        server.metrics.messagesSent[.chat] += count
    }

    func close(_ client: Connection, code: UInt16, reason: String) {
        server.metrics.countClose(CloseCode(rawValue: code))
        client.close(code: CloseCode(rawValue: code), reason: reason)
    }

    func performBlocking<T: Sendable>(_ work: @escaping @Sendable () -> T, then: @escaping (T) -> Void) -> Bool {
        let loop = server.loop
        let completion = LoopBound((then, self))
        let job = {
            DispatchQueue.global().async {
                let result = work()
                loop.execute {
                    let (then, endpoint) = completion.value
                    endpoint.workerFinished()
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

/// A value that crosses threads only to come back to the loop thread that created it.
///
/// @unchecked Sendable: it is created and used on the event loop thread; other threads only
/// carry it through `EventLoop.execute`.
final class LoopBound<Value>: @unchecked Sendable {
    let value: Value

    init(_ value: Value) {
        self.value = value
    }
}
