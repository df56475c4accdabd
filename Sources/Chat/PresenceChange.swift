/// One folded change of who is present in a chat group or a plain `/rooms` room, as the server's
/// presence stream and presence webhook carry it.
///
/// The same fold as the `/ws` `presence` event (docs/protocol.md, "Events"): `online` is the
/// count after the change, `joined` and `left` are set operations, so applying a change twice, or
/// to a snapshot that already holds it, gives the same result.
public struct PresenceChange: Sendable, Equatable {
    /// Where the change happened.
    public enum Place: Sendable, Equatable {
        /// A chat group: its id and name. `joined` and `left` hold user ids.
        case group(id: String, name: String?)
        /// A plain relay room by name. `joined` and `left` hold display names.
        case room(String)
    }

    public var place: Place
    public var online: Int
    public var joined: [String]
    public var left: [String]

    public init(place: Place, online: Int, joined: [String], left: [String]) {
        self.place = place
        self.online = online
        self.joined = joined
        self.left = left
    }

    /// `{"group":"<id>","name":"<name>",...}` or `{"room":"<name>",...}`, then `online`,
    /// `joined` and `left`.
    public var json: [UInt8] {
        var writer = JSONWriter()
        switch place {
        case .group(let id, let name):
            writer.string("group", id)
            writer.string("name", name)
        case .room(let name):
            writer.string("room", name)
        }
        writer.integer("online", online)
        writer.strings("joined", joined)
        writer.strings("left", left)
        return writer.finished()
    }
}
