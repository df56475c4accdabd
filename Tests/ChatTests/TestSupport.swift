import Foundation
import JSON
import Logging
import Store
@testable import Chat

/// A connection as the service sees it.
final class FakeClient {
    let name: String
    init(_ name: String) { self.name = name }
}

/// Records everything the service sends; runs "blocking" work inline so tests are deterministic.
final class FakeTransport: ChatTransport {
    typealias Client = FakeClient

    var outputs: [ObjectIdentifier: [JSONValue]] = [:]
    var closes: [(client: FakeClient, code: UInt16)] = []
    var broadcasts = 0
    weak var service: ChatService<FakeTransport>?

    func send(_ json: [UInt8], to client: FakeClient) {
        outputs[ObjectIdentifier(client), default: []].append((try? JSONValue.parse(json)) ?? .null)
    }

    func broadcast(_ json: [UInt8], to clients: ContiguousArray<FakeClient>, except: FakeClient?, arrival: UInt64?) {
        broadcasts += 1
        for client in clients where client !== except { send(json, to: client) }
    }

    func close(_ client: FakeClient, code: UInt16, reason: String) {
        closes.append((client, code))
        service?.closed(client)
    }

    /// Set to refuse blocking work, as a server whose hashing workers are all busy does.
    var busy = false

    func performBlocking<T: Sendable>(_ work: @escaping @Sendable () -> T, then: @escaping (T) -> Void) -> Bool {
        guard !busy else { return false }
        then(work())
        return true
    }

    /// Takes and clears what `client` received.
    func take(_ client: FakeClient) -> [JSONValue] {
        outputs.removeValue(forKey: ObjectIdentifier(client)) ?? []
    }
}

/// A service over a real store in a temporary folder, with a settable clock.
final class Harness {
    let folder: String
    var store: Store
    let transport = FakeTransport()
    var service: ChatService<FakeTransport>
    let secret: [UInt8] = Array("unit-test-secret-unit-test-secret".utf8)
    var configuration: ChatConfiguration
    let now: Clockwork

    /// A clock the test moves by hand.
    final class Clockwork: @unchecked Sendable {
        // @unchecked: tests touch it from one thread only.
        var milliseconds: Int64 = 1_700_000_000_000
        var nanoseconds: UInt64 = 1_000_000_000
    }

    /// Size at which the store seals a group's segment.
    let segmentBytes: Int

    init(segmentBytes: Int = 1 << 20, configure: (inout ChatConfiguration) -> Void = { _ in }) throws {
        self.segmentBytes = segmentBytes
        var template = Array((NSTemporaryDirectory() + "/chat-test-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed")
        folder = String(cString: template.withUnsafeBufferPointer { $0.baseAddress! })
        var configuration = ChatConfiguration()
        configuration.passwordIterations = 1000
        configure(&configuration)
        self.configuration = configuration
        let clock = Clockwork()
        self.now = clock
        let (store, tree) = try Harness.openStore(folder, segmentBytes: segmentBytes, configuration: configuration, clock: clock)
        self.store = store
        service = ChatService(state: ChatState(tree: tree, storedCounts: store.storedMessageCounts), store: store, transport: transport,
                              secret: secret, configuration: configuration, logger: Logger(label: "test"), clock: Harness.clock(clock))
        transport.service = service
        inbox.listen(to: store)
    }

    /// Messages per group the tests' stores keep in memory: small, so that tests page into
    /// the segments after a checkpoint or a restart.
    static let recentMessages = 3

    /// What the store's threads report, delivered by `settle` on the test's thread as the
    /// event loop's inbox would.
    let inbox = StoreInbox()

    /// Opens the data folder as the server does: `clientId` indexed, retention from the start.
    static func openStore(
        _ folder: String, segmentBytes: Int, configuration: ChatConfiguration, clock: Clockwork
    ) throws -> (Store, JSONValue) {
        try Store.open(
            directory: folder + "/data", durability: .none, segmentBytes: segmentBytes, recentMessages: recentMessages,
            idempotencyFields: ChatService<FakeTransport>.idempotencyFields,
            retention: ChatService<FakeTransport>.retention(configuration, now: clock.milliseconds), logger: Logger(label: "test"))
    }

    static func clock(_ clock: Clockwork) -> ChatClock {
        ChatClock(milliseconds: { clock.milliseconds }, monotonicNanoseconds: { clock.nanoseconds })
    }

    deinit {
        store.close()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Closes the store and builds a new service from what is on disk, as a restart does.
    func restart() throws {
        store.close()
        inbox.drain()
        let (store, tree) = try Harness.openStore(folder, segmentBytes: segmentBytes, configuration: configuration, clock: now)
        self.store = store
        service = ChatService(state: ChatState(tree: tree, storedCounts: store.storedMessageCounts), store: store, transport: transport,
                              secret: secret, configuration: configuration, logger: Logger(label: "test"), clock: Harness.clock(now))
        transport.service = service
        inbox.listen(to: store)
    }

    /// Waits until the store has written everything appended and answered every read, and
    /// delivers the completions and checkpoint reports.
    func settle() {
        while true {
            for event in inbox.drain() {
                switch event {
                case .read(let tag, let result): service.readFinished(tag: tag, result)
                case .checkpoint(let report): service.checkpointed(report)
                }
            }
            if service.hasPendingWrites { service.durable(through: store.durableTicket) }
            if !service.hasPendingWrites && !service.hasPendingReads && inbox.isEmpty { return }
            usleep(200)
        }
    }

    /// Starts a checkpoint and waits until the service has heard of it.
    func checkpoint() {
        settle()
        let before = inbox.checkpoints
        store.compact()
        while inbox.checkpoints == before { usleep(200) }
        settle()
    }

    /// Opens a connection named `name`.
    func connect(_ name: String, token: String? = nil) -> FakeClient {
        let client = FakeClient(name)
        service.opened(client, token: token)
        return client
    }

    /// Sends `request` from `client`, lets the store catch up, and returns the reply (the
    /// output carrying the request's id); other outputs stay queued for `events`.
    @discardableResult
    func call(_ client: FakeClient, _ request: JSONValue) -> JSONValue {
        var request = request
        if case .object(var members) = request, members["id"] == nil {
            members["id"] = "r"
            request = .object(members)
        }
        service.received(client, text: request.serialized)
        settle()
        let id = request["id"]
        var outputs = transport.take(client)
        guard let index = outputs.firstIndex(where: { $0["id"] == id && $0["op"] != nil && id != nil }) else {
            transport.outputs[ObjectIdentifier(client)] = outputs
            return .null
        }
        let reply = outputs.remove(at: index)
        if !outputs.isEmpty { transport.outputs[ObjectIdentifier(client)] = outputs }
        return reply
    }

    /// Events (outputs without an id) that `client` received since the last look.
    func events(_ client: FakeClient) -> [JSONValue] {
        transport.take(client).filter { $0["id"] == nil }
    }

    /// A signed-up user: its connection, id and token.
    typealias User = (client: FakeClient, id: String, token: String)

    /// Signs up a user on a new connection; returns the connection, user id and token.
    func user(_ name: String) -> User {
        let client = connect(name)
        let reply = call(client, ["op": "signup", "email": .string("\(name)@example.com"), "password": .string("password-\(name)"),
                                  "name": .string(name)])
        return (client, reply["user"]?["id"]?.stringValue ?? "", reply["token"]?.stringValue ?? "")
    }

    /// Creates a group owned by `owner` and joins `others` by invite; returns its id.
    func group(_ name: String, owner: FakeClient, members others: [FakeClient] = []) -> String {
        let gid = call(owner, ["op": "create", "name": .string(name)])["group"]?["id"]?.stringValue ?? ""
        let code = call(owner, ["op": "invite", "group": .string(gid)])["invite"] ?? .null
        for other in others { call(other, ["op": "join", "invite": code]) }
        return gid
    }

    /// Advances the clocks by `milliseconds`.
    func advance(_ milliseconds: Int64) {
        now.milliseconds += milliseconds
        now.nanoseconds += UInt64(milliseconds) * 1_000_000
    }
}

/// Reads and checkpoints reported by a store's threads, kept for the test's thread.
final class StoreInbox: @unchecked Sendable {
    // @unchecked: every access goes through `lock`.
    enum Event {
        case read(UInt64, Result<MessagePage, StoreError>)
        case checkpoint(CheckpointReport)
    }

    private let lock = NSLock()
    private var events: [Event] = []
    private var checkpointCount = 0

    func listen(to store: Store) {
        store.onRead = { [self] tag, result in add(.read(tag, result)) }
        store.onCheckpoint = { [self] report in add(.checkpoint(report)) }
    }

    private func add(_ event: Event) {
        lock.lock()
        events.append(event)
        if case .checkpoint = event { checkpointCount += 1 }
        lock.unlock()
    }

    @discardableResult
    func drain() -> [Event] {
        lock.lock()
        defer { lock.unlock() }
        let taken = events
        events.removeAll()
        return taken
    }

    var isEmpty: Bool {
        lock.lock()
        defer { lock.unlock() }
        return events.isEmpty
    }

    /// Checkpoints reported so far.
    var checkpoints: Int {
        lock.lock()
        defer { lock.unlock() }
        return checkpointCount
    }
}

extension JSONValue {
    var code: String? { self["code"]?.stringValue }
    var isOK: Bool { self["op"] == "ok" }
}
