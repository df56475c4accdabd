import HummingbirdWebSocket
import Synchronization

/// The rooms of the relay: a lock-protected map from room name to the outbound writers of its
/// connections, the textbook shape of a Hummingbird chat server.
///
/// Each connection gets an id so it can leave its room and be skipped when it publishes.
/// Publishing copies the other writers out under the lock and writes outside it, so a slow
/// receiver never holds the lock while the publisher waits on that receiver's back-pressure.
final class RoomRegistry: Sendable {
    /// room name -> (connection id -> writer); empty rooms are removed so names do not pile up.
    private let rooms = Mutex<[String: [Int: WebSocketOutboundWriter]]>([:])
    /// Source of connection ids; relaxed is enough because ids only need to be unique.
    private let nextID = Atomic<Int>(0)

    /// Adds a connection's writer to `room` and returns the id that identifies it there.
    func join(_ room: String, writer: WebSocketOutboundWriter) -> Int {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).newValue
        rooms.withLock { $0[room, default: [:]][id] = writer }
        return id
    }

    /// Removes connection `id` from `room`, dropping the room when it becomes empty.
    func leave(_ room: String, id: Int) {
        rooms.withLock { rooms in
            rooms[room]?[id] = nil
            if rooms[room]?.isEmpty == true {
                rooms[room] = nil
            }
        }
    }

    /// The writers of every connection in `room` except `id`, as a snapshot to write to.
    func others(in room: String, excluding id: Int) -> [WebSocketOutboundWriter] {
        rooms.withLock { rooms in
            guard let members = rooms[room] else { return [] }
            var writers: [WebSocketOutboundWriter] = []
            writers.reserveCapacity(members.count)
            for (member, writer) in members where member != id {
                writers.append(writer)
            }
            return writers
        }
    }
}
