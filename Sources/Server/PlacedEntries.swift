/// This node's entries in the cluster's journal whose place in the stream Redis's answer to
/// their `XADD` tells (docs/cluster.md, "One history"), kept until they are applied.
///
/// Redis numbers an entry `milliseconds-sequence`: with a clock that has not moved past the
/// stream's last entry, the new entry gets the last one's milliseconds and its sequence plus
/// one. So an id whose sequence is above 0 comes right after the entry numbered one less, and
/// once that one is applied here nothing lies between: the entry can be applied (its changes
/// are durable, its events in the journal's order) from the answer alone, without waiting for
/// the reader to bring it back. The reader, whose `XREAD` Redis answered at the first of
/// several entries of one of its turns, would bring the others only after its next write to
/// disk. An entry with sequence 0 tells nothing of what came before it and is left to the
/// reader, and so is every entry after it until the reader has applied it.
struct PlacedEntries {
    private var entries: [(id: String, previous: String, ticket: UInt64)] = []
    private var head = 0

    var isEmpty: Bool { head == entries.count }

    /// The id of the entry right before `id` when `id` says which it is: `1700-5` comes
    /// after `1700-4`; nothing is known of what comes before `1700-0`.
    static func previous(of id: String) -> String? {
        guard let (milliseconds, sequence) = ClusterJournal.streamID(id), sequence > 0 else { return nil }
        return "\(milliseconds)-\(sequence - 1)"
    }

    /// Redis took this node's entry `ticket` as `id`. Answers come in the order the entries
    /// were appended, which is their order in the stream.
    mutating func note(_ id: String, ticket: UInt64) {
        guard let previous = Self.previous(of: id) else { return }
        entries.append((id, previous, ticket))
    }

    /// Moves `position` (the last entry applied) over the entries that now come right after
    /// it and drops those at or before it (the reader applied them, or a snapshot holds them).
    /// Returns how many entries `position` moved over and the highest ticket among everything
    /// taken out, which is durable; nil when nothing was.
    mutating func advance(_ position: inout String) -> (moved: Int, ticket: UInt64?) {
        var moved = 0
        var ticket: UInt64?
        while head < entries.count {
            let entry = entries[head]
            if ClusterJournal.compare(entry.id, position) > 0 {
                guard entry.previous == position else { break }
                position = entry.id
                moved += 1
            }
            ticket = entry.ticket
            head += 1
        }
        if head == entries.count {
            entries.removeAll(keepingCapacity: true)
            head = 0
        }
        return (moved, ticket)
    }
}
