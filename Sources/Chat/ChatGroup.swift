import JSON

/// A group as stored under `Groups/<gid>` (without the live `online` set).
public struct ChatGroup: Sendable, Equatable {
    public var name: String
    public var createdBy: String
    public var createdAt: Int64
    /// The invite code, nil for a direct (1:1) group, which cannot be joined by invite.
    public var invite: String?
    public var members: Set<String>
    /// For a direct group, the pair key `<smaller uid>:<larger uid>`.
    public var direct: String?

    public init(name: String, createdBy: String, createdAt: Int64, invite: String?, members: Set<String>, direct: String? = nil) {
        self.name = name
        self.createdBy = createdBy
        self.createdAt = createdAt
        self.invite = invite
        self.members = members
        self.direct = direct
    }
}

extension ChatGroup {
    /// The group a tree value describes, or nil without a `name`.
    init?(treeValue value: JSONValue) {
        guard let name = value["name"]?.stringValue else { return nil }
        self.init(
            name: name, createdBy: value["createdBy"]?.stringValue ?? "", createdAt: value["createdAt"]?.int64Value ?? 0,
            invite: value["invite"]?.stringValue, members: Set((value["userList"]?.objectValue ?? [:]).keys),
            direct: value["direct"]?.stringValue)
    }

    /// The stored form under `Groups/<gid>`; `online` is added only for the live tree API.
    func treeValue(online: [String]?) -> JSONValue {
        var fields: [String: JSONValue] = [
            "name": .string(name), "createdBy": .string(createdBy), "createdAt": .integer(createdAt),
            "userList": .object(members.reduce(into: [:]) { $0[$1] = .bool(true) }),
        ]
        if let invite { fields["invite"] = .string(invite) }
        if let direct { fields["direct"] = .string(direct) }
        if let online { fields["online"] = .object(online.reduce(into: [:]) { $0[$1] = .bool(true) }) }
        return .object(fields)
    }

    /// The protocol's Group object (for members: it carries the invite).
    func write(into writer: inout JSONWriter, id: String, online: [String]) {
        writer.string("id", id)
        writer.string("name", name)
        writer.string("createdBy", createdBy)
        writer.integer("createdAt", createdAt)
        writer.strings("members", members.sorted())
        writer.strings("online", online)
        writer.string("invite", invite)
    }
}
