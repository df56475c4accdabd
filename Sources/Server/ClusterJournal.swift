import Chat
import Crypto
import Logging
import Posix
import Redis
import Store

/// The chat service's journal in cluster mode: one Redis Stream that every node writes its
/// changes to and reads every node's changes from, in one order (docs/cluster.md, "One
/// history"). On the chat loop.
///
/// The service works as on a single node: it changes its state, appends the change to its own
/// store and waits for the change to be durable before it answers. Here the store's `onAppend`
/// hands each change's journal lines over as well; the lines of one loop iteration go to the
/// stream as one entry (`XADD`), which names this process and the last ticket in it. Another
/// connection reads the stream (`XREAD BLOCK`) from the last entry this node applied. Another
/// node's entry is applied to the local store and the state, and its events go to this node's
/// subscribers (`ChatService.applyReplica`); this node's own entry, read back, makes its
/// tickets durable: the service answers and sends the events then, so every node sends the
/// events of every node's changes in the stream's order. Redis's answer to the append does the
/// same sooner when the entry's id places it right after the last entry applied
/// (`PlacedEntries`). A change whose `XADD` failed is answered `unavailable`; should Redis
/// have taken it after all, it comes back as a replica.
///
/// The id of the last entry applied is kept in the local store (`Cluster/journal`), after the
/// changes it covers, so a node that restarts reads on from there. Until the reader has reached
/// the end of the stream, and whenever a connection is lost, the service takes no changes
/// (`acceptsChanges`) and `/readyz` says 503. The token secret is the cluster's
/// (`switchboard:secret`), unless `authSecret` is configured.
final class ClusterJournal: Flushable {
    static let stream = "switchboard:journal"
    static let secretKey = "switchboard:secret"
    /// `switchboard:email:<email>` holds the id of the account that has the email, so two nodes
    /// cannot both sign it up (`SET NX`); given back, if still the same account's, when the
    /// account could not be stored.
    static let emailPrefix = "switchboard:email:"
    static let releaseScript = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"
    /// Where the local tree keeps the id of the last entry applied.
    static let positionPath = ["Cluster", "journal"]
    /// Entries asked for per read: large enough that catching up on a million is a few hundred
    /// round trips, small enough that one answer does not hold the loop for long.
    static let readCount = 2000

    unowned let server: Server
    let service: ChatService<ChatDelivery>
    let store: Store
    let writer: RedisClient
    let reader: RedisClient
    let logger: Logger
    /// This process in the stream: the node and a random part, so that a node restarted under
    /// the same `nodeId` applies the entries of the process before it like another node's.
    let origin: [UInt8]
    /// The id of the last entry applied.
    var position: String
    /// Journal lines appended in this loop iteration, and the last ticket among them.
    private var batch: [UInt8] = []
    private var batchTicket: UInt64 = 0
    private var flushPending = false
    /// This node's entries that may be applied from Redis's answer, before the reader has them.
    private var placed = PlacedEntries()
    /// The reader's next `XREAD` goes out at the end of the loop iteration, from the position
    /// the iteration reached (an entry applied from its answer is not asked for again).
    private var readWanted = false
    /// The highest ticket the service was told is durable or failed.
    private var answered: UInt64 = 0
    /// A read is on its way; the reader has reached the end of the stream since the writer's
    /// connection was last made (the reader asks again at least every second, so it notices
    /// within a second of a new writer connection).
    private var reading = false
    var caughtUp = false
    private var writerEpoch = 0
    /// Counts the reader's connections made and lost, so work begun on one that is gone stops.
    var readerEpoch = 0
    /// Where the token secret comes from: `authSecret`, the same on every node, or Redis,
    /// where this node proposes its data folder's secret (the cluster's if it is the first).
    enum Secret {
        case configured
        case proposed([UInt8])
    }

    /// The shared token secret is known (or configured).
    private var hasSecret: Bool
    /// The data folder's secret, for Redis when it has none; nil when `authSecret` is set.
    private let proposedSecret: [UInt8]?
    /// Entries of other nodes applied, this node's entries applied from Redis's answer to
    /// their append, and appends that failed (`/metrics`).
    private(set) var appliedEntries = 0
    private(set) var placedEntries = 0
    private(set) var failedAppends = 0
    /// Journal entries after which this node tries to write a snapshot.
    let snapshotEntries: Int
    /// The id of the newest snapshot this node knows of, and the entries read since it.
    var snapshotId: String?
    var entriesSinceSnapshot = 0
    /// This node is writing a snapshot.
    var isSnapshotting = false
    var snapshotTimer: UInt64?
    /// Whether this node came with a history but no journal position (its folder served a
    /// single node), until it has looked for an empty cluster to give it to (`seedIfFirst`).
    var historyToSeed: Bool?
    /// A snapshot that could not be loaded is tried again by this timer.
    var snapshotRetry: UInt64?

    init(server: Server, url: RedisURL, node: String, service: ChatService<ChatDelivery>, store: Store,
         position: String?, secret: Secret, snapshotEntries: Int, logger: Logger) {
        self.server = server
        self.snapshotEntries = snapshotEntries
        self.service = service
        self.store = store
        self.logger = logger
        self.position = position ?? "0-0"
        historyToSeed = position == nil && !(service.state.users.isEmpty && service.state.groups.isEmpty)
        switch secret {
        case .configured:
            hasSecret = true
            proposedSecret = nil
        case .proposed(let bytes):
            hasSecret = false
            proposedSecret = bytes
        }
        origin = Array("\(node)/\(Crypto.randomHex(8))".utf8)
        writer = RedisClient(url: url, loop: server.loop, logger: logger, name: "journal")
        reader = RedisClient(url: url, loop: server.loop, logger: logger, name: "journal reader")
        service.isReplicated = true
        service.acceptsChanges = false
        store.onAppend = { [unowned self] ticket, lines in appended(ticket, lines) }
        service.claimEmail = { [unowned self] email, uid, done in
            writer.send(["SET", Self.emailPrefix + email, uid, "NX"]) { result in
                switch result {
                case .success(.simple("OK")): done(.success(true))
                case .success: done(.success(false))
                case .failure: done(.failure(.clusterUnavailable))
                }
            }
        }
        service.releaseEmail = { [unowned self] email, uid in
            writer.send(["EVAL", Self.releaseScript, "1", Self.emailPrefix + email, uid])
        }
        writer.ready = { [unowned self] in
            writerEpoch += 1
            caughtUp = false
            if let proposedSecret { shareSecret(proposing: proposedSecret) }
        }
        writer.down = { [unowned self] _ in
            caughtUp = false
            update()
        }
        reader.ready = { [unowned self] in
            readerEpoch += 1
            loadSnapshot { [unowned self] in read() }
        }
        reader.down = { [unowned self] _ in
            readerEpoch += 1
            reading = false
            caughtUp = false
            update()
        }
    }

    /// Both connections are up, this node has applied the whole stream since, and it knows
    /// the token secret: changes may be made.
    var isReady: Bool { caughtUp && hasSecret && writer.isReady && reader.isReady }

    private func update() {
        service.acceptsChanges = isReady
        server.updateClusterReadiness()
    }

    func start() {
        writer.start()
        reader.start()
        scheduleSnapshotCheck()
    }

    func close() {
        for timer in [snapshotTimer, snapshotRetry].compactMap({ $0 }) { server.loop.cancel(timer: timer) }
        snapshotTimer = nil
        snapshotRetry = nil
        writer.close()
        reader.close()
    }

    // MARK: Writing

    /// Under the store's queue lock: copies the lines into this iteration's entry.
    private func appended(_ ticket: UInt64, _ lines: ArraySlice<UInt8>) {
        batch.append(contentsOf: lines)
        batchTicket = ticket
        flushSoon()
    }

    private func flushSoon() {
        if !flushPending {
            flushPending = true
            server.loop.flushLater(self)
        }
    }

    /// Sends this iteration's changes as one entry, and the reader's next `XREAD` when it is
    /// due. Runs at the end of the loop iteration, so a failure is never reported inside the
    /// `append` that caused it.
    func flush() {
        flushPending = false
        if readWanted {
            readWanted = false
            read()
        }
        guard !batch.isEmpty else { return }
        let ticket = batchTicket
        let arguments: [[UInt8]] = [
            Array("XADD".utf8), Array(Self.stream.utf8), [UInt8(ascii: "*")],
            [UInt8(ascii: "o")], origin, [UInt8(ascii: "t")], Array(String(ticket).utf8), [UInt8(ascii: "m")], batch,
        ]
        batch = []
        writer.send(arguments) { [unowned self] result in
            switch result {
            case .success(let id):
                guard let id = id.text else { return }
                placed.note(id, ticket: ticket)
                if applyPlaced() > 0 { savePosition() }
            case .failure(let error):
                logger.warning("a change could not be written to the cluster's journal", metadata: ["error": "\(error)"])
                failedAppends += 1
                if ticket > answered {
                    answered = ticket
                    service.failed(through: ticket)
                }
            }
        }
    }

    /// Applies this node's entries that come right after `position` (`PlacedEntries`); returns
    /// how many, for the caller to save the position once.
    private func applyPlaced() -> Int {
        guard !placed.isEmpty else { return 0 }
        let (moved, ticket) = placed.advance(&position)
        if let ticket, ticket > answered {
            answered = ticket
            service.durable(through: ticket)
        }
        placedEntries += moved
        entriesSinceSnapshot += moved
        return moved
    }

    // MARK: Reading

    private func read() {
        guard reader.isReady, !reading else { return }
        reading = true
        let epoch = writerEpoch
        reader.send(["XREAD", "COUNT", String(Self.readCount), "BLOCK", "1000", "STREAMS", Self.stream, position]) { [unowned self] result in
            reading = false
            switch result {
            case .success(let value):
                let count = apply(value)
                if count < Self.readCount, epoch == writerEpoch, writer.isReady, !caughtUp {
                    caughtUp = true
                    logger.info("caught up with the cluster's journal", metadata: ["position": "\(position)"])
                    update()
                    seedIfFirst()
                }
                readWanted = true
                flushSoon()
            case .failure(let error):
                logger.debug("reading the cluster's journal failed", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Applies the entries of one `XREAD` answer in order, but for those at or before
    /// `position` (applied from their append's answer meanwhile); returns how many there were.
    private func apply(_ value: RESPValue) -> Int {
        guard case .array(let streams?) = value, case .array(let pair?)? = streams.first, pair.count == 2,
              case .array(let entries?) = pair[1]
        else { return 0 }
        var newEntries = 0
        for entry in entries {
            guard case .array(let parts?) = entry, parts.count == 2, let id = parts[0].text,
                  case .array(let fields?) = parts[1], Self.compare(id, position) > 0
            else { continue }
            position = id
            newEntries += 1
            var from: [UInt8]?
            var ticket: UInt64?
            var lines: [UInt8]?
            var index = 0
            while index + 1 < fields.count {
                if case .bulk(let name?) = fields[index], name.count == 1 {
                    switch name[0] {
                    case UInt8(ascii: "o"): from = fields[index + 1].bytes
                    case UInt8(ascii: "t"): ticket = fields[index + 1].text.flatMap { UInt64($0) }
                    case UInt8(ascii: "m"): lines = fields[index + 1].bytes
                    default: break
                    }
                }
                index += 2
            }
            guard let lines else { continue }
            if from == origin, let ticket, ticket > answered {
                answered = ticket
                service.durable(through: ticket)
            } else if service.applyReplica(lines) {
                if from != origin { appliedEntries += 1 }
            } else {
                logger.error("an entry of the cluster's journal is not a list of changes: skipped", metadata: ["id": "\(id)"])
            }
        }
        entriesSinceSnapshot += newEntries
        if newEntries + applyPlaced() > 0 { savePosition() }
        return entries.count
    }

    /// Keeps `position` in the local store, after the changes it covers.
    func savePosition() {
        store.append(replica: Mutation.set(path: Self.positionPath, value: .string(position)).journalLine, mutationCount: 1)
    }

    // MARK: The token secret

    /// Makes the cluster's token secret this node's, at every new connection: the one in Redis,
    /// or if Redis has none (the first node, or a Redis that lost its data) the one this node
    /// has, else `proposed`, which then becomes everyone's.
    private func shareSecret(proposing proposed: [UInt8]) {
        let candidate = service.secret.isEmpty ? proposed : service.secret
        writer.send([Array("SET".utf8), Array(Self.secretKey.utf8), candidate, Array("NX".utf8)])
        writer.send(["GET", Self.secretKey]) { [unowned self] result in
            guard case .success(let value) = result, let secret = value.bytes, !secret.isEmpty else {
                logger.warning("the cluster's token secret could not be read", metadata: ["result": "\(result)"])
                return
            }
            if !service.secret.isEmpty && service.secret != secret {
                logger.warning("the cluster's token secret changed (Redis lost it?): earlier tokens are no longer valid")
            }
            service.secret = secret
            hasSecret = true
            update()
        }
    }
}
