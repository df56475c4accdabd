import JSON

/// A registered user as stored under `Users/<uid>`.
public struct ChatUser: Sendable, Equatable {
    public var name: String
    /// An image URL, or nil.
    public var avatar: String?
    /// Milliseconds since the epoch.
    public var createdAt: Int64
    /// The groups the user belongs to (`groupList`).
    public var groups: Set<String>

    public init(name: String, avatar: String?, createdAt: Int64, groups: Set<String> = []) {
        self.name = name
        self.avatar = avatar
        self.createdAt = createdAt
        self.groups = groups
    }
}

extension ChatUser {
    /// The user a tree value describes, or nil without a `name`.
    init?(treeValue value: JSONValue) {
        guard let name = value["name"]?.stringValue else { return nil }
        self.init(
            name: name, avatar: value["avatar"]?.stringValue, createdAt: value["createdAt"]?.int64Value ?? 0,
            groups: Set((value["groupList"]?.objectValue ?? [:]).keys))
    }

    /// The stored form under `Users/<uid>`.
    var treeValue: JSONValue {
        var fields: [String: JSONValue] = [
            "name": .string(name), "createdAt": .integer(createdAt),
            "groupList": .object(groups.reduce(into: [:]) { $0[$1] = .bool(true) }),
        ]
        if let avatar { fields["avatar"] = .string(avatar) }
        return .object(fields)
    }

    /// The protocol's User object.
    func write(into writer: inout JSONWriter, id: String, online: Bool) {
        writer.string("id", id)
        writer.string("name", name)
        writer.string("avatar", avatar)
        writer.bool("online", online)
    }
}
