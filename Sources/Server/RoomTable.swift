import Synchronization

/// Which loops have members of each `/rooms` room, shared by every loop: how a publisher knows
/// where to hand its message without asking anyone.
///
/// A loop marks a room when its first member of the room joins, before that member's upgrade
/// is answered, and unmarks it when its last member leaves. So a message published after a
/// member's upgrade completed reaches that member's loop, as it would with one loop. The table
/// is locked only at those two moments; a member keeps its room's `Entry` and a publish reads
/// the entry's bits with one atomic load: no lock on the per-message path. At most 64 loops.
final class RoomTable: Sendable {
    /// One room: bit `i` set while loop `i` has members.
    final class Entry: Sendable {
        let loops = Atomic<UInt64>(0)
    }

    static let maxLoops = 64

    private let entries = Mutex<[String: Entry]>([:])

    /// Loop `loop` has its first member of `room`; returns the room's entry.
    func enter(_ room: String, loop: Int) -> Entry {
        entries.withLock { entries in
            let entry = entries[room] ?? Entry()
            entries[room] = entry
            entry.loops.bitwiseOr(1 << UInt64(loop), ordering: .releasing)
            return entry
        }
    }

    /// Loop `loop`'s last member of `room` left; the room goes when no loop has members.
    func leave(_ room: String, loop: Int) {
        entries.withLock { entries in
            guard let entry = entries[room] else { return }
            let before = entry.loops.bitwiseAnd(~(1 << UInt64(loop)), ordering: .releasing).oldValue
            if before & ~(1 << UInt64(loop)) == 0 { entries[room] = nil }
        }
    }

    /// The loops with members of `room` now, as bits (the publish API, which belongs to no room).
    func loops(of room: String) -> UInt64 {
        entries.withLock { $0[room]?.loops.load(ordering: .acquiring) ?? 0 }
    }
}
