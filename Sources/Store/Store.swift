import Glibc
import Posix
import JSON
import Logging

/// The durable home of the document tree: a journal, a checkpoint of small documents and
/// message segments, and threads that write, checkpoint and read.
///
/// On disk (docs/durability.md, `StoreLayout`): `journal.jsonl` holds every mutation since the
/// last checkpoint; `manifest.json`, `documents/` and `messages/` hold the checkpoint, where
/// each group's messages are append-only segment files with an index. `open` loads the small
/// documents and each group's newest `recentMessages` records, never the whole history, and
/// hands them to the caller as a tree; older messages are read on demand (`read`).
///
/// Writes are group-committed on the writer thread: `append` queues serialized lines and
/// returns a ticket at once; the thread takes everything queued, writes it with one `write`,
/// flushes it with one `fdatasync`, and calls `onDurable` with the highest ticket on disk.
///
/// Checkpoints never hold acknowledgements back: when the journal reaches `compactAfterBytes`
/// the writer renames it aside (`journal.<n>.jsonl`) and goes on in a new one, and the
/// compactor thread applies the set-aside journal to the files (`Checkpoint`), commits the
/// manifest, deletes the journal and reports through `onCheckpoint`. Reads of stored messages
/// run on a reader thread and report through `onRead`.
///
/// After a failed write or flush the store stops acknowledging: every later batch goes to
/// `onFailure`, because after a failed fsync Linux no longer says which pages reached the
/// disk. A restart replays what did.
///
/// Call `close()` before dropping the store: its threads hold a reference until then.
public final class Store: @unchecked Sendable {
    // @unchecked: every mutable field is either guarded by a monitor or confined to one of the
    // store's threads, as each field's comment says.

    /// The data folder, without a trailing slash.
    public let directory: String
    /// Whether batches are flushed before they are acknowledged.
    public let durability: Durability
    /// The journal size at which a checkpoint starts.
    public let compactAfterBytes: Int
    /// Messages per group that `open` returns in the tree (the rest stay on disk).
    public let recentMessages: Int
    /// The fields that index message records by idempotency key (nil: not indexed).
    public let keyFields: IdempotencyFields?
    let logger: Logger
    let layout: StoreLayout
    let files: MessageFiles
    var journalPath: String { layout.journal }
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
    /// True from the journal's rotation until its checkpoint is committed (or has failed).
    var compactionQueued = false
    /// True while the store thread sleeps in `monitor.wait()`: only then does an append need
    /// to signal, so a burst of appends during a write or flush costs no futex calls.
    var writerIsWaiting = false
    /// While the writer gathers the next batch (`gatherAfter`): the number of queued appends
    /// that wakes it; 0 otherwise.
    var appendsAwaited = 0
    var stats = StoreStatistics()
    var durableHandler: @Sendable (UInt64) -> Void = { _ in }
    var failureHandler: @Sendable (UInt64, StoreError) -> Void = { _, _ in }
    var checkpointHandler: @Sendable (CheckpointReport) -> Void = { _ in }
    var readHandler: @Sendable (UInt64, Result<MessagePage, StoreError>) -> Void = { _, _ in }
    /// The first write or flush failure; once set, nothing is acknowledged any more.
    var failure: StoreError?

    // Confined to the writer thread after `open` returns.
    var journalFD: Int32
    /// Bytes of the journal known to hold whole lines, where a failed write is cut back to.
    var journalLength: Int
    /// Whether the journal is the one opened at start, which grows as it is written (no spare
    /// of zeros lies under it).
    var journalIsFirst = true
    /// The generation of the last journal set aside.
    var generation: Int
    var thread: pthread_t?

    /// The compactor's queue and wakeup: journal generations to apply, with the highest ticket
    /// each holds. `checkpoint` is confined to the compactor thread.
    let compactorMonitor = Monitor()
    var rotated: [(generation: Int, ticket: UInt64)] = []
    var compactorStopping = false
    var compactorThread: pthread_t?
    let checkpoint: Checkpoint
    /// What the next checkpoint may delete; guarded by `compactorMonitor`.
    var retentionValue = MessageRetention()

    /// The reader's queue and wakeup.
    let readerMonitor = Monitor()
    var reads: [(tag: UInt64, query: MessageQuery)] = []
    var readerStopping = false
    var readerThread: pthread_t?

    /// A journal flush at least this slow is logged: it held every acknowledgement back.
    static let slowFlushSeconds = 0.1

    /// The largest journal that gets a spare written ahead (`prepareSpareJournal`); beyond it
    /// the zeros would cost more disk than they save.
    static let largestSpareBytes = 256 << 20
    /// True when `journal.spare` is complete and durable; guarded by `monitor`.
    var spareReady = false
    /// See `replacesFirstJournal`; guarded by `monitor`.
    var firstJournalReplaced = false

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
        /// Set the journal aside for a checkpoint now.
        case checkpoint
    }

    init(
        layout: StoreLayout, durability: Durability, compactAfterBytes: Int, recentMessages: Int, logger: Logger,
        lockFD: Int32, journalFD: Int32, generation: Int, checkpoint: Checkpoint
    ) {
        self.keyFields = checkpoint.keyFields
        self.directory = layout.directory
        self.layout = layout
        self.durability = durability
        self.compactAfterBytes = compactAfterBytes
        self.recentMessages = recentMessages
        self.logger = logger
        self.lockFD = lockFD
        self.journalFD = journalFD
        self.journalLength = 0
        self.generation = generation
        self.checkpoint = checkpoint
        self.files = checkpoint.files
    }

    /// Whether the journal opened at start, which grows as it is written, is set aside for the
    /// spare as soon as the compactor has written one, rather than only when it is full. Each
    /// `fdatasync` of a growing file also writes its inode (the size changed): a second round
    /// trip to the device, and on a file system with a journal a commit of it
    /// (docs/durability.md, "Writing"); at a low rate the first journal would take hours to
    /// fill. Off by default, so that a test sees checkpoints only where it asks for them; the
    /// server turns it on. Set it before the first append.
    public var replacesFirstJournal: Bool {
        get { monitor.withLock { firstJournalReplaced } }
        set { monitor.withLock { firstJournalReplaced = newValue } }
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

    /// Cluster mode (docs/cluster.md): told of every append made through `append(_:)` or
    /// `append(mutationCount:writingLines:)`, with its ticket and its journal lines, so the node
    /// can pass the change on to the other nodes. Called on the appending thread under the
    /// queue lock, with the lines where they lie in the queue: it must copy them and return,
    /// nothing more. Set it before the first append, on the thread that appends.
    public var onAppend: ((UInt64, ArraySlice<UInt8>) -> Void)? {
        get { appendHandler }
        set { appendHandler = newValue }
    }
    /// Stored internally: every access to a public stored property pays a run-time
    /// exclusivity check (the compiler cannot see the other modules' accesses), and this one
    /// is read on every append.
    private var appendHandler: ((UInt64, ArraySlice<UInt8>) -> Void)?

    /// Queues `mutations` as one unit and returns its ticket; tickets increase by one per call.
    ///
    /// Serialization happens here, on the caller's thread, straight into the queue's buffer.
    /// The mutations are durable once `onDurable` reports this ticket or a higher one.
    @discardableResult
    public func append(_ mutations: [Mutation]) -> UInt64 {
        append(mutationCount: mutations.count, passedOn: true) { bytes in
            for mutation in mutations { mutation.appendJournalLine(to: &bytes) }
        }
    }

    /// Queues journal lines that `writeLines` appends itself, as one unit; returns its ticket.
    ///
    /// For callers that serialize a hot mutation straight to bytes instead of building a
    /// `JSONValue` first. `writeLines` runs under the queue lock and must append exactly
    /// `mutationCount` whole lines in the format of `Mutation.appendJournalLine(to:)`, each
    /// ending with a newline, and nothing else.
    @discardableResult
    public func append(mutationCount: Int, writingLines writeLines: (inout [UInt8]) -> Void) -> UInt64 {
        append(mutationCount: mutationCount, passedOn: true, writeLines)
    }

    /// Queues journal lines that came from another node of the cluster (already checked
    /// mutations, `mutationCount` of them); `onAppend` does not hear of them.
    @discardableResult
    public func append(replica lines: [UInt8], mutationCount: Int) -> UInt64 {
        append(mutationCount: mutationCount, passedOn: false) { $0.append(contentsOf: lines) }
    }

    private func append(mutationCount: Int, passedOn: Bool, _ writeLines: (inout [UInt8]) -> Void) -> UInt64 {
        monitor.lock()
        lastTicket += 1
        let ticket = lastTicket
        if isClosing {
            let handler = failureHandler
            monitor.unlock()
            handler(ticket, .closed)
            return ticket
        }
        // The caller's closure writes into a local array: an access to `pending` that spans
        // a call to unknown code would cost every access to it a run-time exclusivity check
        // (docs/architecture.md, "Exclusivity checks on the message path").
        var bytes: [UInt8] = []
        swap(&bytes, &pending.bytes)
        let start = bytes.count
        writeLines(&bytes)
        if passedOn, let appendHandler { appendHandler(ticket, bytes[start...]) }
        swap(&bytes, &pending.bytes)
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
        } else if appendsAwaited > 0 && pending.appends >= appendsAwaited {
            appendsAwaited = 0
            monitor.signal()
        }
        monitor.unlock()
        return ticket
    }

    /// Starts a checkpoint after everything appended so far, unless one is running.
    ///
    /// The store starts one by itself when the journal reaches `compactAfterBytes`; this is
    /// for tests and for operators who want the journal applied now.
    public func compact() {
        monitor.withLock {
            guard !isClosing, !compactionQueued else { return }
            if pending.appends > 0 {
                queuedWork.append(.lines(pending))
                pending = PendingLines()
            }
            queuedWork.append(.checkpoint)
            compactionQueued = true
            writerIsWaiting = false
            monitor.signal()
        }
    }

    /// Called on the compactor thread after each checkpoint commits: what is on disk now.
    public var onCheckpoint: @Sendable (CheckpointReport) -> Void {
        get { monitor.withLock { checkpointHandler } }
        set { monitor.withLock { checkpointHandler = newValue } }
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

    /// Writes and flushes everything queued, lets a running checkpoint finish, stops the
    /// store's threads and releases the lock.
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
        stopHelpers()
        FileSystem.close(journalFD)
        FileSystem.close(lockFD)
        monitor.withLock { isClosed = true }
        logger.info("store closed", metadata: ["directory": "\(directory)"])
    }
}
