/// Counters and histograms of the store's disk work, for the metrics endpoint.
///
/// A copy is taken under the store's lock by `Store.statistics`, so every field of one value
/// belongs to the same moment.
public struct StoreStatistics: Sendable, Equatable {
    /// Batches written to the journal (one `write` each).
    public var batches: UInt64 = 0
    /// `fdatasync` calls on the journal (zero with durability `none`).
    public var fsyncs: UInt64 = 0
    /// Mutations made durable.
    public var mutations: UInt64 = 0
    /// Journal bytes written since start.
    public var bytesWritten: UInt64 = 0
    /// Mutations in the most recent batch.
    public var lastBatchMutations = 0
    /// Bytes in the most recent batch.
    public var lastBatchBytes = 0
    /// Bytes in the journal now, which compaction resets to zero.
    public var journalBytes = 0
    /// Completed compactions.
    public var compactions: UInt64 = 0
    /// Size of the last snapshot written or loaded, in bytes.
    public var snapshotBytes = 0
    /// Batches held back because checkpoints fell behind the journal (`CheckpointPace`).
    public var batchesHeldBack: UInt64 = 0
    /// Batches or compactions that failed.
    public var failures: UInt64 = 0
    /// Seconds per journal flush (write and fdatasync).
    public var flushLatency = Histogram(upperBounds: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1])
    /// Mutations per batch, which shows how much group commit is folding together.
    public var batchSize = Histogram(upperBounds: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096])

    /// A histogram with fixed buckets, in the shape Prometheus exposes.
    public struct Histogram: Sendable, Equatable {
        /// Inclusive upper bounds of the buckets, ascending; one more bucket holds the rest.
        public let upperBounds: [Double]
        /// Observations per bucket (not cumulative); `counts.count == upperBounds.count + 1`.
        public private(set) var counts: [UInt64]
        /// The sum of all observations.
        public private(set) var sum: Double = 0
        /// The number of observations.
        public private(set) var count: UInt64 = 0

        /// An empty histogram over `upperBounds`.
        public init(upperBounds: [Double]) {
            self.upperBounds = upperBounds
            self.counts = Array(repeating: 0, count: upperBounds.count + 1)
        }

        /// Adds `times` observations of `value` (several messages written by one flush).
        public mutating func record(_ value: Double, times: UInt64 = 1) {
            var bucket = 0
            while bucket < upperBounds.count && value > upperBounds[bucket] {
                bucket += 1
            }
            counts[bucket] += times
            sum += value * Double(times)
            count += times
        }

        /// Adds `other`'s observations (the same buckets): one histogram from several event
        /// loops' own.
        public mutating func merge(_ other: Histogram) {
            precondition(other.upperBounds == upperBounds, "histograms merge only over the same buckets")
            for bucket in counts.indices { counts[bucket] += other.counts[bucket] }
            sum += other.sum
            count += other.count
        }
    }
}
