/// Whether the store waits for the disk before it reports a mutation durable.
///
/// `fsync` is the default and the only mode in which the durability contract holds: a batch
/// is acknowledged after `fdatasync` returns. `none` acknowledges after the `write` reaches
/// the page cache, so a power loss (not a process crash) may lose acknowledged messages; it is
/// meant for throwaway deployments and benchmarks.
public enum Durability: String, Sendable, CaseIterable {
    /// Acknowledge only after the journal is flushed to stable storage.
    case fsync
    /// Acknowledge after the write returns, without flushing.
    case none
}
