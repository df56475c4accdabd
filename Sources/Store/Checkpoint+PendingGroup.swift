extension Checkpoint {
    /// One group's changes since the last commit: per message id, its new value serialized
    /// (nil for a deletion) and its idempotency key.
    ///
    /// New messages arrive in ascending id order (ids sort by creation), so almost every record
    /// is an append to `ordered`, found again by binary search, and `sorted` needs no sort:
    /// a dictionary keyed by id, sorted at commit, took a third of a checkpoint's time hashing
    /// and comparing ids (perf, 64 durable senders). Only a record whose id sorts below
    /// `ordered`'s last and is not in it (a receipt on a message already in a segment, a clock
    /// that went back) goes to `unordered`.
    struct PendingGroup {
        /// A record: where its value's serialized bytes stand in `storage` (nil for a
        /// deletion), and its idempotency key.
        typealias Record = (value: Range<Int>?, key: IdempotencyKey?)

        /// The bytes of every value set since the last commit, one after another; a record
        /// set again leaves its old bytes behind. One buffer per group instead of an array per
        /// record, which a checkpoint of 300,000 messages allocated, reference-counted and freed
        /// one by one: writing and committing now takes a third less CPU (BENCHMARKS.md).
        private(set) var storage: [UInt8] = []
        /// Records in ascending id order, each id once.
        private var ordered: [(id: String, record: Record)] = []
        /// Records with ids below `ordered.last`'s and not in `ordered`, each id once.
        private var unordered: [String: Record] = [:]
        /// The group was replaced or deleted: its stored segments no longer count.
        var dropsStored = false
        /// False after a deletion of the whole group with nothing written since.
        var exists = true

        init(dropsStored: Bool = false, exists: Bool = true) {
            self.dropsStored = dropsStored
            self.exists = exists
        }

        /// The pending value of message `id`: nil when none is pending, `.some(nil)` when
        /// its deletion is.
        func value(of id: String) -> [UInt8]?? {
            let record = orderedIndex(of: id).map { ordered[$0].record } ?? unordered[id]
            return record.map { record in record.value.map { Array(storage[$0]) } }
        }

        /// A record written: the group exists, and `id`'s pending record is this one.
        mutating func write(_ id: String, copying value: UnsafeRawBufferPointer, key: IdempotencyKey?) {
            exists = true
            place(id, (stored(value), key))
        }

        /// Sets the pending record of message `id` to `value` (nil: its deletion), replacing
        /// one pending before.
        mutating func set(_ id: String, _ value: [UInt8]?, key: IdempotencyKey?) {
            place(id, (value.map { $0.withUnsafeBytes { stored($0) } }, key))
        }

        /// Appends `value` to `storage` and returns where it stands.
        private mutating func stored(_ value: UnsafeRawBufferPointer) -> Range<Int> {
            let start = storage.count
            storage.append(contentsOf: value)
            return start..<storage.count
        }

        private mutating func place(_ id: String, _ record: Record) {
            guard !ordered.isEmpty, id <= ordered[ordered.count - 1].id else { return ordered.append((id, record)) }
            if let index = orderedIndex(of: id) {
                ordered[index].record = record
            } else {
                unordered[id] = record
            }
        }

        /// Every pending record, in ascending id order.
        var sorted: [(id: String, record: Record)] {
            guard !unordered.isEmpty else { return ordered }
            let others = unordered.sorted { $0.key < $1.key }
            var merged: [(id: String, record: Record)] = []
            merged.reserveCapacity(ordered.count + others.count)
            var next = 0
            for (id, record) in ordered {
                while next < others.count && others[next].key < id {
                    merged.append((others[next].key, others[next].value))
                    next += 1
                }
                merged.append((id, record))
            }
            for (id, record) in others[next...] { merged.append((id, record)) }
            return merged
        }

        /// The position of `id` in `ordered`, if there.
        private func orderedIndex(of id: String) -> Int? {
            guard !ordered.isEmpty, id <= ordered[ordered.count - 1].id else { return nil }
            var low = 0
            var high = ordered.count
            while low < high {
                let middle = (low + high) / 2
                if ordered[middle].id < id { low = middle + 1 } else { high = middle }
            }
            return ordered[low].id == id ? low : nil
        }
    }
}
