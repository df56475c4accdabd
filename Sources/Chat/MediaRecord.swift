import JSON

/// One stored upload as kept under `Media/<id>`: who uploaded it, its type and size, and when.
/// The bytes themselves are a file of the data folder's `media/` (docs/durability.md, "Media").
public struct MediaRecord: Sendable, Equatable {
    /// The user id of the uploader, the only one who may delete it.
    public var owner: String
    public var type: MediaType
    public var bytes: Int
    /// Milliseconds since the epoch.
    public var createdAt: Int64

    public init(owner: String, type: MediaType, bytes: Int, createdAt: Int64) {
        self.owner = owner
        self.type = type
        self.bytes = bytes
        self.createdAt = createdAt
    }

    /// The record a tree value describes, or nil when it lacks a field.
    init?(treeValue value: JSONValue) {
        guard let owner = value["owner"]?.stringValue, let type = value["type"]?.stringValue.flatMap(MediaType.init(rawValue:)),
              let bytes = value["bytes"]?.int64Value, bytes >= 0
        else { return nil }
        self.init(owner: owner, type: type, bytes: Int(bytes), createdAt: value["createdAt"]?.int64Value ?? 0)
    }

    /// The stored form under `Media/<id>`.
    var treeValue: JSONValue {
        .object([
            "owner": .string(owner), "type": .string(type.rawValue), "bytes": .integer(Int64(bytes)),
            "createdAt": .integer(createdAt),
        ])
    }
}
