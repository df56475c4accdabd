import Glibc
import Posix
import Logging

/// The compactor thread: applies set-aside journals to the files, one checkpoint at a time.
extension Store {
    func runCompactor() {
        // A checkpoint is background work: at the lowest priority the scheduler runs the event
        // loop and the writer first when they share a core with it, and the compactor mostly
        // in the time the loop waits for a flush. At nice 10 its share of a busy core still
        // held acknowledgements back (ack p99 3.7 ms at 64 durable senders, 1.6 ms at 19).
        // Should it fall behind, `CheckpointPace` slows the journal down until it catches up.
        // (Linux keeps nice values per thread; 0 names the calling one.)
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
        do throws(StoreError) {
            if keyFields != nil { try files.buildKeys() } else { files.keys.markReady() }
        } catch {
            logger.error("reading the idempotency keys of the segment indexes failed; resent messages may be stored twice: \(error)")
        }
        prepareSpareJournal()
        while true {
            let job: (generation: Int, ticket: UInt64, retention: MessageRetention)? = compactorMonitor.withLock {
                while rotated.isEmpty && !compactorStopping { compactorMonitor.wait() }
                return rotated.isEmpty ? nil : (rotated[0].generation, rotated.removeFirst().ticket, retentionValue)
            }
            guard let job else { return }
            // The spare first: the rotation that queued this job took the last one, and the
            // journal after it is set aside the moment this checkpoint ends whenever the
            // senders filled it meanwhile. Written after the checkpoint, the spare was late for
            // that journal under load, which then grew line by line (docs/durability.md).
            prepareSpareJournal()
            checkpoint.retention = job.retention
            runCheckpoint(generation: job.generation, ticket: job.ticket)
        }
    }

    /// Applies `journal.<generation>.jsonl`, commits, deletes it and reports. A failure
    /// leaves the journal for the next start to apply and stops further checkpoints (the
    /// journal then grows until a restart), because the files may hold half a checkpoint
    /// that only a fresh start can sort out from the manifest.
    private func runCheckpoint(generation: Int, ticket: UInt64) {
        // Each phase's wall time, and the CPU time it took: a checkpoint at the lowest
        // priority may wait for a busy core far longer than it computes.
        var phases = [Phase.now()]
        let path = layout.rotatedJournal(generation)
        let outcome: Checkpoint.Outcome
        do throws(StoreError) {
            let replay = try Store.replayJournal(path: path, wholeMessage: checkpoint.applyWholeMessage) { mutation throws(StoreError) in
                try checkpoint.apply(mutation)
            }
            if replay.tornBytes > 0 {
                logger.warning("ignored a torn last line of \(replay.tornBytes) bytes in \(path)")
            }
            phases.append(.now())
            outcome = try checkpoint.commit(generation: generation)
            phases.append(.now())
            _ = try io(FileSystem.removeIfExists(path))
        } catch {
            logger.error("checkpoint failed; \(path) stays for the next start, no further checkpoints run: \(error)")
            monitor.withLock { stats.failures += 1 }
            return
        }
        phases.append(.now())
        let (start, end) = (phases[0], phases[phases.count - 1])
        let spans = zip(phases.dropFirst(), phases).map { "\(($0.wall - $1.wall) / 1_000_000) with \(($0.cpu - $1.cpu) / 1_000_000)" }
        let handler = monitor.withLock {
            stats.compactions += 1
            stats.snapshotBytes = outcome.appendedBytes
            compactionQueued = false
            return checkpointHandler
        }
        logger.info("""
            checkpoint \(generation): \(outcome.appendedBytes) segment bytes for \(outcome.lastIDs.count) groups in \
            \((end.wall - start.wall) / 1_000_000) ms with \((end.cpu - start.cpu) / 1_000_000) of CPU \
            (replay \(spans[0]), write and commit \(spans[1]), journal deleted \(spans[2]))
            """)
        for (gid, dropped) in outcome.dropped.sorted(by: { $0.key < $1.key }) {
            logger.info("retention: deleted \(dropped.records) messages of group \(gid) (ids through \(dropped.through))")
        }
        handler(CheckpointReport(ticket: ticket, lastIDs: outcome.lastIDs.compactMapValues { $0 }, dropped: outcome.dropped))
    }

    /// Writes `journal.spare`: zeros, flushed, `spareBytes` of them, for the writer to take as
    /// its next journal (docs/durability.md, "Writing").
    ///
    /// Lines written over blocks that are already on disk, within the file's size, change no
    /// metadata, so the journal's `fdatasync` is a data flush alone. A journal that grows as it
    /// is written changes its size and allocates blocks with every batch, and then each
    /// `fdatasync` waits for an ext4 journal commit, which carries whatever else the file
    /// system is committing at that moment: a running checkpoint's segments, freed blocks to
    /// discard. Those commits held acknowledgements back for up to 300 ms (BENCHMARKS.md).
    /// The zeros are written out in pieces with a pause between, like a checkpoint's segments,
    /// and flushed once at the end (one device cache flush, not one per piece).
    func prepareSpareJournal() {
        guard durability == .fsync, compactAfterBytes <= Self.largestSpareBytes, !monitor.withLock({ spareReady }) else { return }
        let path = layout.spareJournal
        let zeros = [UInt8](repeating: 0, count: Checkpoint.pacedBytes)
        do throws(StoreError) {
            let fd = try io(FileSystem.open(path, flags: O_WRONLY | O_CREAT | O_TRUNC, mode: 0o600))
            defer { FileSystem.close(fd) }
            var written = 0
            while written < Self.spareBytes(compactAfterBytes: compactAfterBytes) {
                if monitor.withLock({ isClosing }) { return }
                try io(FileSystem.write(fd, zeros, at: written, path: path))
                try io(FileSystem.writeOut(fd, offset: written, count: zeros.count, path: path))
                written += zeros.count
                usleep(Checkpoint.pauseMicroseconds)
            }
            try io(FileSystem.fdatasync(fd, path: path))
            try io(FileSystem.syncDirectory(directory))
        } catch {
            logger.warning("could not write a spare journal, the next journal starts empty: \(error)")
            return
        }
        monitor.withLock { spareReady = true }
    }

    /// The zeros of a spare journal: as long as a journal grows before its checkpoint, and a
    /// quarter more for the lines that come while the checkpoint before it finishes. Under
    /// load the senders fill a journal faster than a checkpoint at the lowest priority applies
    /// the one before, so it passes `compactAfterBytes` and grows on, slowed by
    /// `CheckpointPace`, until that checkpoint ends: by 6 to 8 MB at 64 durable senders with the
    /// default 64 MiB (BENCHMARKS.md, "A spare for every journal").
    static func spareBytes(compactAfterBytes: Int) -> Int {
        compactAfterBytes + compactAfterBytes / 4 + Checkpoint.pacedBytes
    }

    /// Stops the compactor (after the checkpoints queued) and the reader; `close` calls it
    /// once the writer has stopped.
    func stopHelpers() {
        compactorMonitor.withLock {
            compactorStopping = true
            compactorMonitor.signal()
        }
        if let compactorThread { pthread_join(compactorThread, nil) }
        readerMonitor.withLock {
            readerStopping = true
            readerMonitor.signal()
        }
        if let readerThread { pthread_join(readerThread, nil) }
    }

    /// A moment of a checkpoint on the monotonic clock and on the compactor's CPU clock.
    private struct Phase {
        let wall: UInt64
        let cpu: UInt64

        static func now() -> Phase {
            Phase(wall: SystemClock.monotonicNanoseconds(), cpu: SystemClock.threadCPUNanoseconds())
        }
    }
}
