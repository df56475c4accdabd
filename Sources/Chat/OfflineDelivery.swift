/// A group message that was stored while some of the group's members had no open connection:
/// what the offline-delivery webhook tells the operator's push service (APNs, FCM), so it can
/// notify those members' devices.
public struct OfflineDelivery: Sendable {
    public var group: String
    public var groupName: String
    /// The message as clients see it (docs/protocol.md, "Objects": Message), already JSON.
    public var message: [UInt8]
    /// Members, other than the sender, with no open `/ws` connection, sorted.
    public var users: [String]

    /// `{"group","name","message":{...},"users":[ids]}`.
    public var json: [UInt8] {
        var writer = JSONWriter()
        writer.string("group", group)
        writer.string("name", groupName)
        writer.raw("message", message)
        writer.strings("users", users)
        return writer.finished()
    }
}
