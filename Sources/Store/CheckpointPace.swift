/// How long the writer holds each batch back while checkpoints fall behind the journal.
///
/// Every message journaled since the last finished checkpoint is held in memory by the store's
/// owner (the chat service keeps it until a segment holds it), so memory follows the journal
/// bytes not yet checkpointed. When senders write faster than the compactor applies journals
/// (64 durable senders on one core: the journal grew at 13 MB/s while a checkpoint, sharing the
/// core at a lower priority, applied 5 MB/s), each checkpoint covers more than the one before and
/// memory grows without bound: 1.6 GiB within a minute. Like a log-structured store's write
/// stall, but gradual: once the new journal passes `compactAfterBytes` while a checkpoint runs,
/// each batch waits a little, up to `longestDelayNanoseconds` when it reaches twice that, so
/// the senders slow to the compactor's pace (and leave it the CPU they no longer use) instead of
/// stopping. A batch never waits while no checkpoint runs, so a store that keeps up never pays.
struct CheckpointPace {
    /// The longest a batch waits: far below any client's timeout, and long enough that 64
    /// senders with one request each in flight write under 13,000 lines a second, a third of
    /// what the compactor applies while it shares one core with them.
    static let longestDelayNanoseconds: UInt64 = 4_000_000

    /// The wait before the next batch, with `journalBytes` in the current journal, a checkpoint
    /// running (or queued) or not, and checkpoints starting at `compactAfterBytes`.
    static func delay(journalBytes: Int, checkpointRunning: Bool, compactAfterBytes: Int) -> UInt64 {
        guard checkpointRunning, compactAfterBytes > 0, journalBytes > compactAfterBytes else { return 0 }
        let excess = min(journalBytes - compactAfterBytes, compactAfterBytes)
        return UInt64(Double(excess) / Double(compactAfterBytes) * Double(longestDelayNanoseconds))
    }
}
