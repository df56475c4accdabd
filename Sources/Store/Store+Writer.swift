import Glibc
import Posix
import JSON
import Logging

/// The store thread: takes the queue, writes batches, flushes them, compacts.
extension Store {
    /// Starts the writer, compactor and reader threads; called once by `open`.
    func startThreads() throws(StoreError) {
        let writer = try spawn("store-writer") { $0.runWriter() }
        monitor.withLock { self.thread = writer }
        compactorThread = try spawn("store-compact") { $0.runCompactor() }
        readerThread = try spawn("store-reader") { $0.runReader() }
    }

    /// Starts a thread running `body`; the thread owns one retain of the store until it returns.
    /// `name` (at most 15 bytes) tells the threads apart in `top -H`, `perf` and `/proc`.
    private func spawn(_ name: String, _ body: @escaping (Store) -> Void) throws(StoreError) -> pthread_t {
        final class Start {
            let store: Store
            let name: String
            let body: (Store) -> Void
            init(_ store: Store, _ name: String, _ body: @escaping (Store) -> Void) {
                self.store = store
                self.name = name
                self.body = body
            }
        }
        let context = Unmanaged.passRetained(Start(self, name, body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { context in
            let start = Unmanaged<Start>.fromOpaque(context!).takeRetainedValue()
            LoopThread.nameCurrentThread(start.name)
            start.body(start.store)
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<Start>.fromOpaque(context).release()
            throw StoreError.io(path: directory, operation: "start a store thread for", errno: result)
        }
        return thread
    }

    /// The store thread's loop: sleep until work is queued, take all of it, do it, repeat;
    /// after `close`, finish what is queued and return.
    private func runWriter() {
        var spare: [UInt8] = []
        var last = LastFlush()
        var pacedGeneration = -1
        monitor.lock()
        while true {
            if queuedWork.isEmpty && pending.appends == 0 && !isClosing {
                while queuedWork.isEmpty && pending.appends == 0 && !isClosing {
                    writerIsWaiting = true
                    monitor.wait()
                }
                writerIsWaiting = false
                // The first append of a burst woke this thread, and on a busy (or pinned) core
                // the wakeup preempts the event loop that is still queuing the rest of the
                // burst. Yielding once lets the loop finish, so the burst becomes one batch:
                // one write and one fsync instead of one per request.
                monitor.unlock()
                sched_yield()
                monitor.lock()
            }
            // Said once per journal, after the lock is released.
            let announcesPace = holdBackWhileCheckpointsLag() && pacedGeneration != generation
            if announcesPace { pacedGeneration = generation }
            gatherAfter(last)
            if queuedWork.isEmpty && pending.appends == 0 {
                break
            }
            var work = queuedWork
            queuedWork.removeAll(keepingCapacity: true)
            if pending.appends > 0 {
                work.append(.lines(pending))
                // Hand the appenders last round's buffer, emptied, so a steady stream of
                // batches reuses two buffers instead of allocating one per batch.
                pending = PendingLines(bytes: spare)
                spare = []
            }
            monitor.unlock()
            if announcesPace {
                logger.notice("""
                    checkpoints fall behind the journal (\(journalLength) bytes since the last one set aside): batches are \
                    held back up to \(CheckpointPace.longestDelayNanoseconds / 1_000_000) ms each until one finishes
                    """)
            }
            for item in work {
                switch item {
                case .lines(let lines):
                    let start = SystemClock.monotonicNanoseconds()
                    flush(lines)
                    let end = SystemClock.monotonicNanoseconds()
                    last = LastFlush(appends: lines.appends, end: end, nanoseconds: end - start)
                    if spare.capacity < lines.bytes.capacity {
                        spare = lines.bytes
                        spare.removeAll(keepingCapacity: true)
                    }
                case .checkpoint:
                    rotate()
                }
            }
            monitor.lock()
        }
        monitor.unlock()
    }

    /// Waits, with the lock held, as long as `CheckpointPace` says while a checkpoint runs
    /// and the journal has grown past `compactAfterBytes` since; queued work (a checkpoint
    /// request) or `close` ends the wait early. Returns whether it waited.
    private func holdBackWhileCheckpointsLag() -> Bool {
        let delay = CheckpointPace.delay(journalBytes: journalLength, checkpointRunning: compactionQueued, compactAfterBytes: compactAfterBytes)
        guard delay > 0, queuedWork.isEmpty, !isClosing else { return false }
        let deadline = SystemClock.monotonicNanoseconds() + delay
        while queuedWork.isEmpty, !isClosing, SystemClock.monotonicNanoseconds() < deadline {
            monitor.wait(untilNanoseconds: deadline)
        }
        stats.batchesHeldBack += 1
        return true
    }

    /// Waits, with the lock held, while `LastFlush.gatherDeadline` says the next batch should
    /// wait for more appends; an append that brings the batch to the size awaited, a checkpoint
    /// request or `close` ends the wait early.
    private func gatherAfter(_ last: LastFlush) {
        guard queuedWork.isEmpty, !isClosing, let deadline = last.gatherDeadline(queuedAppends: pending.appends) else { return }
        while pending.appends < last.appends, queuedWork.isEmpty, !isClosing,
              SystemClock.monotonicNanoseconds() < deadline {
            appendsAwaited = last.appends
            monitor.wait(untilNanoseconds: deadline)
        }
        appendsAwaited = 0
    }

    /// Writes one batch with one `write`, flushes it, and reports it.
    private func flush(_ lines: PendingLines) {
        let earlierFailure = monitor.withLock { failure }
        if let earlierFailure {
            report(failure: earlierFailure, ticket: lines.lastTicket, countsAsNew: false)
            return
        }
        let start = SystemClock.monotonicNanoseconds()
        do throws(StoreError) {
            // At the end of the lines, not of the file: a spare journal's zeros lie beyond.
            try io(FileSystem.write(journalFD, lines.bytes, at: journalLength, path: journalPath))
            if durability == .fsync {
                try io(FileSystem.fdatasync(journalFD, path: journalPath))
            }
        } catch {
            // A short or failed write may have left part of a line; cutting back to the last
            // whole line keeps the journal loadable (best effort: the disk is already failing).
            try? FileSystem.truncate(journalFD, to: journalLength, path: journalPath)
            logger.error("journal write failed, no further writes will be acknowledged: \(error)")
            monitor.withLock { failure = error }
            report(failure: error, ticket: lines.lastTicket, countsAsNew: true)
            return
        }
        let seconds = Double(SystemClock.monotonicNanoseconds() - start) / 1e9
        if seconds >= Self.slowFlushSeconds {
            logger.warning("a journal write and flush of \(lines.bytes.count) bytes took \(Int(seconds * 1000)) ms")
        }
        journalLength += lines.bytes.count
        let handler: @Sendable (UInt64) -> Void = monitor.withLock {
            stats.batches += 1
            if durability == .fsync { stats.fsyncs += 1 }
            stats.mutations += UInt64(lines.mutations)
            stats.bytesWritten += UInt64(lines.bytes.count)
            stats.lastBatchMutations = lines.mutations
            stats.lastBatchBytes = lines.bytes.count
            stats.journalBytes = journalLength
            stats.flushLatency.record(seconds)
            stats.batchSize.record(Double(lines.mutations))
            durableTicketValue = lines.lastTicket
            return durableHandler
        }
        handler(lines.lastTicket)
        let startsCheckpoint = monitor.withLock {
            let yieldsToSpare = firstJournalReplaced && journalIsFirst && spareReady
            guard !compactionQueued, journalLength >= compactAfterBytes || yieldsToSpare else { return false }
            compactionQueued = true
            return true
        }
        if startsCheckpoint { rotate() }
    }

    private func report(failure: StoreError, ticket: UInt64, countsAsNew: Bool) {
        let handler = monitor.withLock {
            if countsAsNew { stats.failures += 1 }
            return failureHandler
        }
        handler(ticket, failure)
    }

    /// Sets the journal aside as `journal.<n>.jsonl` and starts a new one, then hands
    /// generation `n` to the compactor. Runs between two batches, so every ticket written so
    /// far is in the set-aside journal and every later one in the new journal; the new name is
    /// made durable before a line in it is acknowledged. Costs a rename, an open and a folder
    /// fsync: acknowledgements never wait for the checkpoint itself.
    private func rotate() {
        let failed = monitor.withLock { failure != nil }
        guard !failed, journalLength > 0 else {
            monitor.withLock { compactionQueued = false }
            return
        }
        let start = SystemClock.monotonicNanoseconds()
        defer {
            let seconds = Double(SystemClock.monotonicNanoseconds() - start) / 1e9
            if seconds >= Self.slowFlushSeconds { logger.warning("setting the journal aside took \(Int(seconds * 1000)) ms") }
        }
        let next = generation + 1
        let path = layout.rotatedJournal(next)
        do throws(StoreError) {
            try io(FileSystem.rename(journalPath, to: path))
        } catch {
            logger.error("could not set the journal aside for a checkpoint, going on with it: \(error)")
            monitor.withLock {
                compactionQueued = false
                stats.failures += 1
            }
            return
        }
        let fresh: Int32
        do throws(StoreError) {
            if monitor.withLock({ spareReady }) {
                try io(FileSystem.rename(layout.spareJournal, to: journalPath))
                monitor.withLock { spareReady = false }
            }
            fresh = try io(FileSystem.open(journalPath, flags: O_WRONLY | O_CREAT, mode: 0o600))
            try io(FileSystem.syncDirectory(directory))
        } catch {
            // Lines keep going to the renamed file through the open descriptor, and a restart
            // replays it: nothing is lost, but no checkpoint runs until then.
            logger.error("could not start a new journal, checkpoints stop until a restart: \(error)")
            monitor.withLock { stats.failures += 1 }
            return
        }
        FileSystem.close(journalFD)
        journalFD = fresh
        journalLength = 0
        journalIsFirst = false
        generation = next
        let ticket = monitor.withLock {
            stats.journalBytes = 0
            return durableTicketValue
        }
        compactorMonitor.withLock {
            rotated.append((next, ticket))
            compactorMonitor.signal()
        }
    }
}
