/// What a committed checkpoint put on disk, for the caller's memory: messages it holds may be
/// dropped from memory and read back from the segments.
public struct CheckpointReport: Sendable, Equatable {
    /// Every mutation appended with this ticket or a lower one is in the checkpoint's files.
    public var ticket: UInt64
    /// Per group the checkpoint wrote, the highest id of its in-order records now on disk
    /// (absent when the group has none).
    public var lastIDs: [String: String]
    /// Per group, the messages retention deleted with whole sealed segments.
    public var dropped: [String: DroppedMessages] = [:]

    public init(ticket: UInt64, lastIDs: [String: String], dropped: [String: DroppedMessages] = [:]) {
        self.ticket = ticket
        self.lastIDs = lastIDs
        self.dropped = dropped
    }
}

/// Messages a checkpoint deleted for retention: every one with an id up to `through`.
public struct DroppedMessages: Sendable, Equatable {
    public var through: String
    /// In-order records of the deleted segments.
    public var records: Int
}

/// Which stored messages a checkpoint may delete (`Store.retention`). Only whole sealed
/// segments go: one whose every record is beyond the newest `keepNewest` of its group (0: no
/// limit), or whose every id sorts below `before` (nil: no limit). The open segment always
/// stays, so a group keeps up to a segment more than the limit asks.
public struct MessageRetention: Sendable, Equatable {
    public var keepNewest: Int
    public var before: String?

    public init(keepNewest: Int = 0, before: String? = nil) {
        self.keepNewest = keepNewest
        self.before = before
    }

    var isUnlimited: Bool { keepNewest <= 0 && before == nil }
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
    /// The message whose record carries idempotency key `key`, in whichever group holds it
    /// (`MessagePage.group`); none when no stored message carries it.
    case sentBy(IdempotencyKey)
}
