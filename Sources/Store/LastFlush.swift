/// The journal batch flushed last, and how long the next one waits for its senders.
///
/// Senders that wait for their acknowledgement before sending again come back one round trip
/// after it. Were the next flush to start at once, it would carry only what arrived during the
/// last one, and the senders just acknowledged would all wait for the flush after it: on a disk
/// whose fsync takes milliseconds they split into two halves that take turns, each flush
/// carrying one half. Waiting a fraction of a flush for them keeps them in one batch, as a server
/// that flushes on its event loop between reading requests and answering them does. On a fast
/// disk the wait is a few microseconds; a batch as large as the last never waits, and every
/// acknowledgement still follows the flush that made it durable.
struct LastFlush {
    /// The appends the batch acknowledged.
    var appends = 0
    /// When its write and flush ended (monotonic nanoseconds).
    var end: UInt64 = 0
    /// How long its write and flush took.
    var nanoseconds: UInt64 = 0

    /// The longest a batch waits for the senders of the one before it.
    static let longestGatherNanoseconds: UInt64 = 2_000_000

    /// Until when the next batch, with `queuedAppends` queued so far, waits for more: half the
    /// last flush's time after it ended (at most `longestGatherNanoseconds`), or nil when it
    /// need not wait (as many queued as the last batch acknowledged, or a batch of one).
    func gatherDeadline(queuedAppends: Int) -> UInt64? {
        guard appends > 1, queuedAppends < appends else { return nil }
        return end + min(nanoseconds / 2, Self.longestGatherNanoseconds)
    }
}
