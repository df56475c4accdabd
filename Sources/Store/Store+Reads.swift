import JSON

/// Reading stored messages: on the caller's thread, or on the reader thread with the result
/// reported through `onRead`, so an event loop never waits for a segment.
extension Store {
    /// Reads `query` now, on the calling thread.
    public func read(_ query: MessageQuery) throws(StoreError) -> MessagePage {
        try files.reading { () throws(StoreError) in try readNow(query) }
    }

    private func readNow(_ query: MessageQuery) throws(StoreError) -> MessagePage {
        switch query {
        case .older(let group, let before, let limit):
            return try files.older(group, before: before, limit: limit)
        case .newer(let group, let after, let before, let limit):
            return try files.newer(group, after: after, before: before, limit: limit)
        case .one(let group, let id):
            let value = try files.record(group, id)
            return MessagePage(records: value.map { [(id, $0)] } ?? [], more: false)
        case .sentBy(let key):
            guard let found = try files.sentBy(key) else { return MessagePage(records: [], more: false) }
            return MessagePage(records: [(found.id, found.value)], more: false, group: found.group)
        }
    }

    /// Whether a stored message may carry idempotency key `key`: false is certain, true is
    /// confirmed (or not) by reading `.sentBy(key)`.
    public func mayHaveStored(_ key: IdempotencyKey) -> Bool {
        keyFields != nil && files.keys.mayContain(key)
    }

    /// What retention lets the next checkpoints delete (see `MessageRetention`).
    public var retention: MessageRetention {
        get { compactorMonitor.withLock { retentionValue } }
        set { compactorMonitor.withLock { retentionValue = newValue } }
    }

    /// Queues `query` for the reader thread, which reports it to `onRead` with `tag`.
    public func read(_ query: MessageQuery, tag: UInt64) {
        readerMonitor.withLock {
            reads.append((tag, query))
            readerMonitor.signal()
        }
    }

    /// Called on the reader thread with each queued read's tag and result.
    public var onRead: @Sendable (UInt64, Result<MessagePage, StoreError>) -> Void {
        get { monitor.withLock { readHandler } }
        set { monitor.withLock { readHandler = newValue } }
    }

    /// Every stored message of `group` (not those only in the journal), ascending: for the
    /// tree API, which reads on the caller's thread.
    public func storedMessages(of group: String) throws(StoreError) -> [(id: String, value: JSONValue)] {
        try files.reading { () throws(StoreError) in try files.everything(group) }
    }

    /// Per group, how many messages the segments hold.
    public var storedMessageCounts: [String: Int] {
        files.all.mapValues(\.recordCount)
    }

    func runReader() {
        while true {
            let batch: [(tag: UInt64, query: MessageQuery)] = readerMonitor.withLock {
                while reads.isEmpty && !readerStopping { readerMonitor.wait() }
                defer { reads.removeAll() }
                return reads
            }
            if batch.isEmpty { return }
            let handler = onRead
            for (tag, query) in batch {
                handler(tag, Result { () throws(StoreError) in try read(query) })
            }
        }
    }
}
