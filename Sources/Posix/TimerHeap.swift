/// Pending one-shot timers of an event loop, ordered by deadline (a binary min-heap).
///
/// Confined to the loop thread.
struct TimerHeap {
    struct Entry {
        let deadline: UInt64
        let id: UInt64
        let body: () -> Void
    }

    private var entries: [Entry] = []
    private var cancelled: Set<UInt64> = []

    var nextDeadline: UInt64? { entries.first?.deadline }

    mutating func insert(_ entry: Entry) {
        entries.append(entry)
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].deadline < entries[parent].deadline else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    mutating func cancel(_ id: UInt64) {
        cancelled.insert(id)
    }

    /// Removes and returns the earliest timer if it is due at `now`; cancelled ones are skipped.
    mutating func popDue(now: UInt64) -> Entry? {
        while let first = entries.first, first.deadline <= now {
            let last = entries.removeLast()
            if !entries.isEmpty {
                entries[0] = last
                siftDown()
            }
            if cancelled.remove(first.id) == nil { return first }
        }
        return nil
    }

    private mutating func siftDown() {
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < entries.count && entries[left].deadline < entries[smallest].deadline { smallest = left }
            if right < entries.count && entries[right].deadline < entries[smallest].deadline { smallest = right }
            if smallest == parent { return }
            entries.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
