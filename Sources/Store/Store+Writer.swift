import Glibc
import Posix
import JSON
import Logging

/// The store thread: takes the queue, writes batches, flushes them, compacts.
extension Store {
    /// Starts the store thread; called once by `open`.
    func startThread() throws(StoreError) {
        // The thread owns one retain of the store until its loop returns.
        let context = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { context in
            let store = Unmanaged<Store>.fromOpaque(context!).takeRetainedValue()
            store.runWriter()
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<Store>.fromOpaque(context).release()
            throw StoreError.io(path: directory, operation: "start the store thread for", errno: result)
        }
        monitor.withLock { self.thread = thread }
    }

    /// The store thread's loop: sleep until work is queued, take all of it, do it, repeat;
    /// after `close`, finish what is queued and return.
    private func runWriter() {
        var spare: [UInt8] = []
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
            for item in work {
                switch item {
                case .lines(let lines):
                    flush(lines)
                    if spare.capacity < lines.bytes.capacity {
                        spare = lines.bytes
                        spare.removeAll(keepingCapacity: true)
                    }
                case .compact(let writeSnapshot):
                    compact(writeSnapshot)
                }
            }
            monitor.lock()
        }
        monitor.unlock()
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
            try io(FileSystem.writeAll(journalFD, lines.bytes, path: journalPath))
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
    }

    private func report(failure: StoreError, ticket: UInt64, countsAsNew: Bool) {
        let handler = monitor.withLock {
            if countsAsNew { stats.failures += 1 }
            return failureHandler
        }
        handler(ticket, failure)
    }

    /// Writes a new snapshot and empties the journal, in the order that keeps every moment
    /// loadable: tmp written and fsynced, renamed over `tree.json`, folder fsynced (the rename
    /// is now durable), and only then the journal truncated. A crash before the rename leaves
    /// the old snapshot with the full journal; after it, the new snapshot with a journal whose
    /// replay changes nothing (mutations are idempotent).
    private func compact(_ writeSnapshot: @Sendable (inout [UInt8]) -> Void) {
        defer { monitor.withLock { compactionQueued = false } }
        if monitor.withLock({ failure }) != nil {
            logger.error("compaction skipped: the journal failed earlier")
            return
        }
        let start = SystemClock.monotonicNanoseconds()
        var bytes: [UInt8] = []
        writeSnapshot(&bytes)
        do throws(StoreError) {
            try writeTemporarySnapshot(bytes)
            try io(FileSystem.rename(temporarySnapshotPath, to: snapshotPath))
        } catch {
            _ = try? FileSystem.removeIfExists(temporarySnapshotPath)
            logger.error("compaction failed, keeping the current snapshot and journal: \(error)")
            monitor.withLock { stats.failures += 1 }
            return
        }
        do throws(StoreError) {
            try io(FileSystem.syncDirectory(directory))
        } catch {
            // Without a durable rename, a power loss could bring back the old snapshot, so the
            // journal must stay whole.
            logger.error("compaction could not make the rename durable, keeping the journal: \(error)")
            monitor.withLock { stats.failures += 1 }
            return
        }
        do throws(StoreError) {
            try io(FileSystem.truncate(journalFD, to: 0, path: journalPath))
            try io(FileSystem.fdatasync(journalFD, path: journalPath))
        } catch {
            logger.error("could not empty the journal after compaction, no further writes will be acknowledged: \(error)")
            monitor.withLock {
                failure = error
                stats.failures += 1
            }
            return
        }
        journalLength = 0
        let milliseconds = Double(SystemClock.monotonicNanoseconds() - start) / 1e6
        monitor.withLock {
            stats.compactions += 1
            stats.journalBytes = 0
            stats.snapshotBytes = bytes.count
        }
        logger.info("store compacted: \(bytes.count) snapshot bytes in \(Int(milliseconds)) ms")
    }

    private func writeTemporarySnapshot(_ bytes: [UInt8]) throws(StoreError) {
        let fd = try io(FileSystem.open(temporarySnapshotPath, flags: O_WRONLY | O_CREAT | O_TRUNC, mode: 0o600))
        defer { FileSystem.close(fd) }
        try io(FileSystem.writeAll(fd, bytes, path: temporarySnapshotPath))
        try io(FileSystem.fsync(fd, path: temporarySnapshotPath))
    }
}
