import Chat

/// Every `/rooms` room's members across all loops, kept on the chat loop: the one count each
/// `* ... joined (N online)` notice reports, and who is there by name (the presence stream,
/// webhook and snapshot).
///
/// Each loop keeps its own members (`RoomEndpoint`) and tells the directory of every join and
/// leave, in order. Counting on one loop makes the counts exact and the notices one sequence:
/// every member, on whatever loop, sees the joins and leaves of a room in the same order with
/// the same counts. Joins and leaves are rare next to messages, which never come here.
/// Confined to the chat loop.
final class RoomDirectory {
    /// Members per loop of one room.
    private struct Occupancy {
        var perLoop: [Int]
        var total = 0
    }

    private let loops: Int
    private var rooms: [String: Occupancy] = [:]
    /// Who is in each room by name, and the folded changes since the last presence flush.
    let presence = RoomPresence()

    init(loops: Int) {
        self.loops = loops
    }

    /// Rooms with at least one member.
    var roomCount: Int { rooms.count }

    /// Members of `room` on every loop.
    func count(of room: String) -> Int {
        rooms[room]?.total ?? 0
    }

    /// What a join or a leave changed: the room's size after it, and the loops with members,
    /// which get the notice.
    struct Change: Equatable {
        var online: Int
        var loopsWithMembers: [Int]
    }

    /// A member called `name` joined `room` on loop `loop`.
    func joined(_ room: String, _ name: String, on loop: Int) -> Change {
        var occupancy = rooms[room] ?? Occupancy(perLoop: Array(repeating: 0, count: loops))
        occupancy.perLoop[loop] += 1
        occupancy.total += 1
        rooms[room] = occupancy
        presence.joined(room, name)
        return Change(online: occupancy.total, loopsWithMembers: occupied(occupancy))
    }

    /// A member called `name` left `room` on loop `loop`.
    func left(_ room: String, _ name: String, on loop: Int) -> Change {
        guard var occupancy = rooms[room], occupancy.perLoop[loop] > 0 else {
            return Change(online: count(of: room), loopsWithMembers: [])
        }
        occupancy.perLoop[loop] -= 1
        occupancy.total -= 1
        rooms[room] = occupancy.total > 0 ? occupancy : nil
        presence.left(room, name)
        return Change(online: occupancy.total, loopsWithMembers: occupied(occupancy))
    }

    private func occupied(_ occupancy: Occupancy) -> [Int] {
        occupancy.perLoop.indices.filter { occupancy.perLoop[$0] > 0 }
    }
}
