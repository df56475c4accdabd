/// A group's messages in ascending id order (ids sort by creation), for binary-search paging.
public struct MessageLog: Sendable, Equatable {
    public private(set) var messages: [ChatMessage] = []

    public init(_ messages: consuming [ChatMessage] = []) {
        self.messages = Self.sortedByID(messages)
    }

    public var count: Int { messages.count }
    public var last: ChatMessage? { messages.last }

    /// Inserts `message` in order; new messages have the largest id, so this is an append.
    public mutating func insert(_ message: ChatMessage) {
        if let last = messages.last, last.id >= message.id {
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

    /// Drops the oldest messages beyond the newest `limit` (0: no limit) and those created
    /// before `cutoff` (milliseconds since the epoch; 0: none). Returns how many were dropped.
    @discardableResult
    public mutating func trim(keepingLast limit: Int, createdSince cutoff: Int64) -> Int {
        var start = limit > 0 ? max(0, messages.count - limit) : 0
        if cutoff > 0 {
            // Ids sort by creation, so the old messages are a prefix.
            while start < messages.count && messages[start].createdAt < cutoff { start += 1 }
        }
        guard start > 0 else { return 0 }
        messages.removeFirst(start)
        return start
    }

    /// Sets `receivedBy[user]` of the message at `index`.
    public mutating func setReceipt(at index: Int, user: String, time: Int64) {
        messages[index].receivedBy[user] = time
    }

    /// A page: up to `limit` messages, ascending, and whether more lie beyond it.
    ///
    /// With `after`, the first `limit` after that id (more = later ones remain); with `before`,
    /// the last `limit` before it (more = earlier ones remain); with neither, the latest `limit`.
    public func page(after: String?, before: String?, limit: Int) -> (ArraySlice<ChatMessage>, more: Bool) {
        if let after {
            let start = firstIndex(after: after)
            let end = min(messages.count, start + limit)
            return (messages[start..<end], end < messages.count)
        }
        let end = before.map { firstIndex(notBefore: $0) } ?? messages.count
        let start = max(0, end - limit)
        return (messages[start..<end], start > 0)
    }
}
