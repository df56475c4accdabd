/// A group's messages in memory: the newest ones, in ascending id order (ids sort by
/// creation), for binary-search paging.
///
/// Memory holds a suffix of the group's history: every message not yet in a checkpoint (those
/// live only in the journal) and at least the newest `recentMessages` (configuration) of the
/// rest. `olderOnDisk` counts the messages before `messages.first` that only the store's
/// segments hold; pages that reach into them are read off the event loop
/// (MessageLog+Paging.swift).
///
/// The messages are kept in chunks (MessageChunks) so that dropping the oldest after a
/// checkpoint moves whole chunks out instead of copying every message that stays.
public struct MessageLog: Sendable, Equatable {
    public private(set) var messages = MessageChunks()
    /// Stored messages older than every message in memory.
    public internal(set) var olderOnDisk = 0
    /// Messages in memory changed (a receipt) after they reached a segment, with the ticket of
    /// the change: they stay in memory until a checkpoint holds that ticket.
    var pinned: [String: UInt64] = [:]
    /// Receipts on messages that are only on disk, with the ticket of the latest: laid over
    /// what a read returns until a checkpoint holds that ticket.
    var detachedReceipts: [String: (ticket: UInt64, receivedBy: [String: Int64])] = [:]
    /// Counts evictions, so a read that started before one knows its memory part moved.
    var evictions = 0

    public init(_ messages: consuming [ChatMessage] = [], olderOnDisk: Int = 0) {
        self.messages = MessageChunks(Self.sortedByID(messages))
        self.olderOnDisk = olderOnDisk
    }

    /// Messages in memory.
    public var count: Int { messages.count }
    /// Messages stored in all: in memory and older ones on disk.
    public var total: Int { messages.count + olderOnDisk }
    public var last: ChatMessage? { messages.last }

    public static func == (lhs: MessageLog, rhs: MessageLog) -> Bool {
        lhs.messages == rhs.messages && lhs.olderOnDisk == rhs.olderOnDisk
    }

    /// Inserts `message`, journaled with `ticket`, in order; new messages have the largest id,
    /// so this is an append. One that lands elsewhere (a clock that went back) may have an id
    /// below what a checkpoint already stored, so it is pinned in memory until a checkpoint
    /// holds its ticket.
    public mutating func insert(_ message: consuming ChatMessage, ticket: UInt64 = 0) {
        if let lastID = messages.lastID, lastID >= message.id {
            pinned[message.id] = ticket
            let index = firstIndex(after: message.id)
            if index > 0 && messages[index - 1].id == message.id {
                messages[index - 1] = message
            } else {
                messages.insert(message, at: index)
            }
        } else {
            messages.append(message)
        }
    }

    /// Removes the message with `id` from memory, if it is there.
    mutating func remove(id: String) {
        guard let index = index(of: id) else { return }
        messages.remove(at: index)
        pinned[id] = nil
        evictions += 1
    }

    /// The position of the message with `id`, if stored.
    public func index(of id: String) -> Int? {
        let index = firstIndex(notBefore: id)
        return index < messages.count && messages[index].id == id ? index : nil
    }

    /// The first position whose id is greater than or equal to `id`.
    public func firstIndex(notBefore id: String) -> Int {
        var low = 0
        var high = messages.count
        while low < high {
            let middle = (low + high) / 2
            if messages[middle].id < id { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The first position whose id is greater than `id`.
    public func firstIndex(after id: String) -> Int {
        var low = 0
        var high = messages.count
        while low < high {
            let middle = (low + high) / 2
            if messages[middle].id <= id { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Sets `receivedBy[user]` of the message at `index`, a change journaled with `ticket`.
    public mutating func setReceipt(at index: Int, user: String, time: Int64, ticket: UInt64) {
        messages[index].receivedBy[user] = time
        pinned[messages[index].id] = ticket
    }

    /// Records a receipt on message `id`, which is only on disk, journaled with `ticket`.
    mutating func setDetachedReceipt(_ id: String, user: String, time: Int64, ticket: UInt64) {
        var receipts = detachedReceipts[id]?.receivedBy ?? [:]
        receipts[user] = time
        detachedReceipts[id] = (ticket, receipts)
    }

    /// After a checkpoint holding every change up to `ticket` and this group's messages up to
    /// `lastStored` (nil: none of them): forgets changes that are now on disk and drops the
    /// oldest messages that are stored, beyond the newest `keeping`.
    ///
    /// Returns the dropped messages in the chunks that held them: freeing a checkpoint's worth
    /// of them (a quarter of a million) took the event loop 200 ms, so the caller frees them on
    /// another thread. The messages that stay are not copied (only those sharing a chunk with
    /// the last dropped one): copying them all, up to a million that arrived during the
    /// checkpoint, stalled the loop 60 to 100 ms.
    mutating func checkpointed(through ticket: UInt64, lastStored: String?, keeping: Int) -> MessageChunks.Removed {
        if !pinned.isEmpty { pinned = pinned.filter { $0.value > ticket } }
        if !detachedReceipts.isEmpty { detachedReceipts = detachedReceipts.filter { $0.value.ticket > ticket } }
        guard let lastStored else { return MessageChunks.Removed() }
        let stored = firstIndex(after: lastStored)
        var drop = min(stored, messages.count - keeping)
        if !pinned.isEmpty, drop > 0, let firstPinned = messages[..<drop].firstIndex(where: { pinned[$0.id] != nil }) {
            drop = firstPinned
        }
        guard drop > 0 else { return MessageChunks.Removed() }
        olderOnDisk += drop
        evictions += 1
        return messages.removePrefix(drop)
    }

    /// Retention deleted this group's stored messages with ids up to `through`, `records` of
    /// them: they leave memory too. Returns the messages that left, like `checkpointed`.
    mutating func forget(through: String, records: Int) -> MessageChunks.Removed {
        if !detachedReceipts.isEmpty { detachedReceipts = detachedReceipts.filter { $0.key > through } }
        let gone = firstIndex(after: through)
        guard gone > 0 else {
            olderOnDisk = max(0, olderOnDisk - records)
            return MessageChunks.Removed()
        }
        // Memory held some of them, so every older one on disk went as well.
        olderOnDisk = 0
        if !pinned.isEmpty {
            for message in messages[..<gone] { pinned[message.id] = nil }
        }
        evictions += 1
        return messages.removePrefix(gone)
    }
}
