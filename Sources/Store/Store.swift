import Glibc
import Posix
import JSON
import Logging

/// The durable home of the document tree: a snapshot, a journal, and a thread that writes.
///
/// On disk a data folder holds `tree.json` (the last snapshot), `journal.jsonl` (one mutation
/// a line since that snapshot), `lock` (held with `flock` while a store is open) and `secret`.
/// `open` loads the snapshot, replays the journal and hands the tree to the caller; the store
/// keeps no copy of it, because the chat service holds the live state as typed values.
///
/// Writes are group-committed on the store's own thread: `append` queues serialized lines and
/// returns a ticket at once; the thread takes everything queued, writes it with one `write`,
/// flushes it with one `fdatasync`, and calls `onDurable` with the highest ticket that is now on
/// disk. Appends that arrive during a flush form the next batch. `compact` is queued in the same
/// FIFO, so the snapshot it writes covers exactly the appends made before it.
///
/// Compaction is the caller's decision: after appending it reads `needsCompaction` (the journal
/// has reached `compactAfterBytes` and no compaction is queued) and calls `compact` with a
/// snapshot of its state. After a failed write or flush the store stops acknowledging: every
/// later batch goes to `onFailure`, because after a failed fsync Linux no longer says which
/// pages reached the disk. A restart replays what did.
///
/// Call `close()` before dropping the store: its thread holds a reference until then.
public final class Store: @unchecked Sendable {
    // @unchecked: every mutable field is either guarded by `monitor` or touched only by the
    // store thread, as each field's comment says.

    /// The data folder, without a trailing slash.
    public let directory: String
    /// Whether batches are flushed before they are acknowledged.
    public let durability: Durability
    /// The journal size at which `needsCompaction` turns true.
    public let compactAfterBytes: Int
    let logger: Logger
    let journalPath: String
    let snapshotPath: String
    let temporarySnapshotPath: String
    /// Held open for the store's lifetime; closing it releases the `flock`.
    let lockFD: Int32

    /// Guards the queue, the callbacks, the statistics and the flags below.
    let monitor = Monitor()

    // Guarded by `monitor`.
    var pending = PendingLines()
    var queuedWork: [Work] = []
    var lastTicket: UInt64 = 0
    var durableTicketValue: UInt64 = 0
    var isClosing = false
    var isClosed = false
    var compactionQueued = false
    /// True while the store thread sleeps in `monitor.wait()`: only then does an append need
    /// to signal, so a burst of appends during a write or flush costs no futex calls.
    var writerIsWaiting = false
    var stats = StoreStatistics()
    var durableHandler: @Sendable (UInt64) -> Void = { _ in }
    var failureHandler: @Sendable (UInt64, StoreError) -> Void = { _, _ in }
    /// The first write or flush failure; once set, nothing is acknowledged any more.
    var failure: StoreError?

    // Confined to the store thread after `open` returns.
    let journalFD: Int32
    /// Bytes of the journal known to hold whole lines, where a failed write is cut back to.
    var journalLength: Int
    var thread: pthread_t?

    /// Lines appended since the store thread last took the queue.
    struct PendingLines {
        var bytes: [UInt8] = []
        var mutations = 0
        var appends = 0
        var lastTicket: UInt64 = 0
    }

    /// One unit of the store thread's FIFO.
    enum Work {
        /// Journal lines to write and flush, acknowledged up to `lastTicket`.
        case lines(PendingLines)
        /// A snapshot to write, after which the journal starts empty.
        case compact(@Sendable (inout [UInt8]) -> Void)
    }

    init(
        directory: String, durability: Durability, compactAfterBytes: Int, logger: Logger,
        lockFD: Int32, journalFD: Int32, journalLength: Int, snapshotBytes: Int
    ) {
        self.directory = directory
        self.durability = durability
        self.compactAfterBytes = compactAfterBytes
        self.logger = logger
        self.journalPath = directory + "/journal.jsonl"
        self.snapshotPath = directory + "/tree.json"
        self.temporarySnapshotPath = directory + "/tree.json.tmp"
        self.lockFD = lockFD
        self.journalFD = journalFD
        self.journalLength = journalLength
        self.stats.journalBytes = journalLength
        self.stats.snapshotBytes = snapshotBytes
    }

    /// Called on the store thread with the highest ticket now durable; set it before the first
    /// append. The server's handler wakes its event loop through an eventfd.
    public var onDurable: @Sendable (UInt64) -> Void {
        get { monitor.withLock { durableHandler } }
        set { monitor.withLock { durableHandler = newValue } }
    }

    /// Called on the store thread when the batch ending at the given ticket could not be made
    /// durable: every ticket after the last one passed to `onDurable`, up to this one, failed.
    public var onFailure: @Sendable (UInt64, StoreError) -> Void {
        get { monitor.withLock { failureHandler } }
        set { monitor.withLock { failureHandler = newValue } }
    }

    /// Queues `mutations` as one unit and returns its ticket; tickets increase by one per call.
    ///
    /// Serialization happens here, on the caller's thread, straight into the queue's buffer.
    /// The mutations are durable once `onDurable` reports this ticket or a higher one.
    @discardableResult
    public func append(_ mutations: [Mutation]) -> UInt64 {
        monitor.lock()
        lastTicket += 1
        let ticket = lastTicket
        if isClosing {
            let handler = failureHandler
            monitor.unlock()
            handler(ticket, .closed)
            return ticket
        }
        for mutation in mutations {
            mutation.appendJournalLine(to: &pending.bytes)
        }
        return queued(ticket: ticket, mutations: mutations.count)
    }

    /// Queues journal lines that `writeLines` appends itself, as one unit; returns its ticket.
    ///
    /// For callers that serialize a hot mutation straight to bytes instead of building a
    /// `JSONValue` first. `writeLines` runs under the queue lock and must append exactly
    /// `mutationCount` whole lines in the format of `Mutation.appendJournalLine(to:)`, each
    /// ending with a newline, and nothing else.
    @discardableResult
    public func append(mutationCount: Int, writingLines writeLines: (inout [UInt8]) -> Void) -> UInt64 {
        monitor.lock()
        lastTicket += 1
        let ticket = lastTicket
        if isClosing {
            let handler = failureHandler
            monitor.unlock()
            handler(ticket, .closed)
            return ticket
        }
        writeLines(&pending.bytes)
        return queued(ticket: ticket, mutations: mutationCount)
    }

    /// Records an append whose lines are already in `pending`, wakes the writer if it sleeps,
    /// and releases the lock taken by the caller.
    private func queued(ticket: UInt64, mutations: Int) -> UInt64 {
        pending.mutations += mutations
        pending.appends += 1
        pending.lastTicket = ticket
        if writerIsWaiting {
            writerIsWaiting = false
            monitor.signal()
        }
        monitor.unlock()
        return ticket
    }

    /// Queues a compaction whose snapshot is produced by `writeSnapshot` on the store thread.
    ///
    /// `writeSnapshot` appends the whole tree as JSON to the buffer it is given. It runs later
    /// and on another thread, so it must capture an immutable copy of the state as of this call
    /// (the chat service's value-type models are cheap to copy), never the live state. Writing
    /// bytes directly lets the caller serialize its typed models without first building a
    /// `JSONValue` tree of a million messages.
    public func compact(writingSnapshot writeSnapshot: @escaping @Sendable (inout [UInt8]) -> Void) {
        monitor.withLock {
            guard !isClosing else { return }
            if pending.appends > 0 {
                queuedWork.append(.lines(pending))
                pending = PendingLines()
            }
            queuedWork.append(.compact(writeSnapshot))
            compactionQueued = true
            writerIsWaiting = false
            monitor.signal()
        }
    }

    /// Queues a compaction whose snapshot is the value `snapshot` returns on the store thread.
    public func compact(snapshot: @escaping @Sendable () -> JSONValue) {
        compact(writingSnapshot: { out in snapshot().serialize(into: &out) })
    }

    /// True when the journal has reached `compactAfterBytes` and no compaction is queued.
    public var needsCompaction: Bool {
        monitor.withLock { !compactionQueued && stats.journalBytes >= compactAfterBytes }
    }

    /// Bytes in the journal file now.
    public var journalBytes: Int {
        monitor.withLock { stats.journalBytes }
    }

    /// The highest ticket reported durable so far.
    public var durableTicket: UInt64 {
        monitor.withLock { durableTicketValue }
    }

    /// A consistent copy of the counters and histograms.
    public var statistics: StoreStatistics {
        monitor.withLock { stats }
    }

    /// Writes and flushes everything queued, stops the store thread and releases the lock.
    ///
    /// Blocks until done. Appends after `close` are reported to `onFailure` as `.closed`.
    /// Calling it again does nothing.
    public func close() {
        let thread: pthread_t? = monitor.withLock {
            guard !isClosing else { return nil }
            isClosing = true
            writerIsWaiting = false
            monitor.signal()
            return self.thread
        }
        guard let thread else { return }
        pthread_join(thread, nil)
        FileSystem.close(journalFD)
        FileSystem.close(lockFD)
        monitor.withLock { isClosed = true }
        logger.info("store closed", metadata: ["directory": "\(directory)"])
    }
}
