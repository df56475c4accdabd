/// Named rooms of members: publish/subscribe that knows nothing of sockets or frames.
///
/// The server keeps one registry per kind of room and fans a message out by iterating
/// `members(of:)`. An empty room is removed at once, so the registry's size is the number of
/// rooms in use. Confined to the event loop thread.
public final class RoomRegistry<Member: AnyObject> {
    private var rooms: [String: Room<Member>] = [:]

    public init() {}

    /// Rooms with at least one member.
    public var roomCount: Int { rooms.count }

    /// Adds `member` to `room`; returns the room's size afterwards.
    @discardableResult
    public func join(_ room: String, _ member: Member) -> Int {
        rooms[room, default: Room()].insert(member)
        return rooms[room]!.count
    }

    /// Removes `member` from `room`; returns the room's size afterwards.
    @discardableResult
    public func leave(_ room: String, _ member: Member) -> Int {
        guard var members = rooms.removeValue(forKey: room) else { return 0 }
        members.remove(member)
        let count = members.count
        if count > 0 { rooms[room] = members }
        return count
    }

    /// The members of `room` (empty when nobody is there). Iterating the returned array is safe
    /// even if members leave meanwhile: it is a copy-on-write snapshot.
    public func members(of room: String) -> ContiguousArray<Member> {
        rooms[room]?.members ?? []
    }

    /// Whether `room` has a member other than `member`, without a copy of its member list
    /// (a room in the registry is never empty).
    public func hasMember(in room: String, besides member: Member) -> Bool {
        guard let room = rooms[room] else { return false }
        return room.count > 1 || !room.contains(member)
    }
}
