import Chat

/// Who is in each plain `/rooms` room, by display name, and the changes since the last flush,
/// folded like the chat's `presence` diffs: a join and a leave within one window cancel out.
///
/// Rooms have no accounts, so a room's users are display names; two connections may share one
/// (a person with two tabs, or two guests who chose the same name), so names are counted.
/// `online` counts connections, as the room's `* ... joined (3 online)` notices do. Confined to
/// the event loop thread.
final class RoomPresence {
    private struct Occupancy {
        var connections = 0
        var names: [String: Int] = [:]
    }

    /// The window's changes for one room: its connection count before the first change, and
    /// for each name whose presence changed, whether it was present before.
    private struct Window {
        var connectionsBefore: Int
        var wasPresent: [String: Bool] = [:]
    }

    private var rooms: [String: Occupancy] = [:]
    private var windows: [String: Window] = [:]

    /// A connection called `name` entered `room`.
    func joined(_ room: String, _ name: String) {
        let occupancy = rooms[room, default: Occupancy()]
        note(room, name, occupancy)
        rooms[room, default: Occupancy()].connections += 1
        rooms[room, default: Occupancy()].names[name, default: 0] += 1
    }

    /// A connection called `name` left `room`.
    func left(_ room: String, _ name: String) {
        guard var occupancy = rooms[room], let count = occupancy.names[name] else { return }
        note(room, name, occupancy)
        occupancy.connections -= 1
        occupancy.names[name] = count > 1 ? count - 1 : nil
        rooms[room] = occupancy.connections > 0 ? occupancy : nil
    }

    private func note(_ room: String, _ name: String, _ occupancy: Occupancy) {
        if windows[room] == nil { windows[room] = Window(connectionsBefore: occupancy.connections) }
        if windows[room]!.wasPresent[name] == nil { windows[room]!.wasPresent[name] = occupancy.names[name] != nil }
    }

    /// One change per room whose names or count changed since the last call, rooms by name.
    func flush() -> [PresenceChange] {
        guard !windows.isEmpty else { return [] }
        let taken = windows
        windows.removeAll()
        var changes: [PresenceChange] = []
        for (room, window) in taken.sorted(by: { $0.key < $1.key }) {
            let occupancy = rooms[room] ?? Occupancy()
            var joined: [String] = []
            var left: [String] = []
            for (name, wasPresent) in window.wasPresent {
                let isPresent = occupancy.names[name] != nil
                if isPresent && !wasPresent { joined.append(name) }
                if !isPresent && wasPresent { left.append(name) }
            }
            guard !joined.isEmpty || !left.isEmpty || occupancy.connections != window.connectionsBefore else { continue }
            changes.append(PresenceChange(
                place: .room(room), online: occupancy.connections, joined: joined.sorted(), left: left.sorted()))
        }
        return changes
    }

    /// Every room's names with their connections, rooms and names sorted: this node's share of
    /// the cluster's rooms (ClusterRooms).
    var counts: [(room: String, name: String, connections: Int)] {
        rooms.sorted { $0.key < $1.key }.flatMap { room, occupancy in
            occupancy.names.sorted { $0.key < $1.key }.map { (room: room, name: $0.key, connections: $0.value) }
        }
    }

    /// Every room with its connection count and its distinct names, rooms and names sorted.
    var snapshot: [(name: String, online: Int, users: [String])] {
        rooms.sorted { $0.key < $1.key }.map { (name: $0.key, online: $0.value.connections, users: $0.value.names.keys.sorted()) }
    }
}
