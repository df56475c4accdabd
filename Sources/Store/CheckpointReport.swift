/// What a committed checkpoint put on disk, for the caller's memory: messages it holds may be
/// dropped from memory and read back from the segments.
public struct CheckpointReport: Sendable, Equatable {
    /// Every mutation appended with this ticket or a lower one is in the checkpoint's files.
    public var ticket: UInt64
    /// Per group the checkpoint wrote, the highest id of its in-order records now on disk
    /// (absent when the group has none).
    public var lastIDs: [String: String]
}

/// A range of one group's stored messages (see `Store.read`).
public enum MessageQuery: Sendable, Equatable {
    /// The newest `limit` messages with ids below `before` (the newest of all when nil).
    case older(group: String, before: String?, limit: Int)
    /// The oldest `limit` messages with ids above `after` (from the first when nil) and below
    /// `before` (no bound when nil).
    case newer(group: String, after: String?, before: String?, limit: Int)
    /// One message by id.
    case one(group: String, id: String)
}
