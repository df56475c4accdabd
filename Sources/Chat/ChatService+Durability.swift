import Dispatch
import Store

/// Group commit: changes go to the store, replies wait for `onDurable`.
extension ChatService {
    /// Appends `mutations` and runs `completion` with true once they are durable (false if
    /// the store could not make them so). Completions run in ticket order.
    func commit(_ mutations: [Mutation], message: (group: String, message: ChatMessage)? = nil,
                completion: @escaping (Bool) -> Void) {
        committed(store.append(mutations), message: message, completion: completion)
    }

    /// Registers `completion` (and the message that joins the history) for a ticket the
    /// store already returned.
    func committed(_ ticket: UInt64, message: (group: String, message: ChatMessage)? = nil,
                   completion: @escaping (Bool) -> Void) {
        completions.append((ticket, completion))
        if let message { pendingMessages.append((ticket, message.group, message.message)) }
    }

    /// Runs every completion whose ticket is at most `ticket`: the store has it on disk.
    public func durable(through ticket: UInt64) {
        finish(through: ticket, succeeded: true)
    }

    /// Runs every completion up to `ticket` as failed: the store could not write them.
    public func failed(through ticket: UInt64) {
        finish(through: ticket, succeeded: false)
    }

    private func finish(through ticket: UInt64, succeeded: Bool) {
        while pendingMessageHead < pendingMessages.count, pendingMessages[pendingMessageHead].ticket <= ticket {
            let pending = pendingMessages[pendingMessageHead]
            pendingMessageHead += 1
            if succeeded { state.messages[pending.group, default: MessageLog()].insert(pending.message, ticket: pending.ticket) }
        }
        if pendingMessageHead == pendingMessages.count {
            pendingMessages.removeAll(keepingCapacity: true)
            pendingMessageHead = 0
        }
        while completionHead < completions.count, completions[completionHead].ticket <= ticket {
            let completion = completions[completionHead].run
            completionHead += 1
            completion(succeeded)
        }
        // Reset the FIFO when drained; compact it when a long backlog has been consumed, so
        // the array neither grows forever nor is shifted on every completion.
        if completionHead == completions.count {
            completions.removeAll(keepingCapacity: true)
            completionHead = 0
        } else if completionHead > 1024 {
            completions.removeFirst(completionHead)
            completionHead = 0
        }
    }

    /// Whether some changes still wait for the disk.
    public var hasPendingWrites: Bool { completionHead < completions.count }

    /// A checkpoint is on disk: changes up to its ticket no longer need memory, and each
    /// group keeps only its newest `store.recentMessages` of the messages it stored.
    /// Runs on the loop, told by the store's compactor thread through the loop's inbox.
    public func checkpointed(_ report: CheckpointReport) {
        var dropped: [[ChatMessage]] = []
        for gid in Array(state.messages.keys) {
            let lastStored = report.lastIDs[gid]
            guard lastStored != nil || state.messages[gid]?.pinned.isEmpty == false
                || state.messages[gid]?.detachedReceipts.isEmpty == false
            else { continue }
            if let old = state.messages[gid]?.checkpointed(through: report.ticket, lastStored: lastStored, keeping: store.recentMessages),
                !old.isEmpty
            {
                dropped.append(old)
            }
        }
        guard !dropped.isEmpty else { return }
        let garbage = dropped
        dropped = []
        // The last references go with the block: the messages are freed on that thread.
        DispatchQueue.global(qos: .utility).async { _ = garbage.count }
    }

    /// Reads `query` on the store's reader thread; `completion` runs on the loop with the
    /// messages (converted, receipts not yet on disk laid over them) or nil if the read failed.
    func readStored(_ query: MessageQuery, completion: @escaping ([ChatMessage]?, Bool) -> Void) {
        nextReadTag += 1
        reads[nextReadTag] = (query, completion)
        store.read(query, tag: nextReadTag)
    }

    /// The store's reader finished the read `tag`; runs its completion.
    public func readFinished(tag: UInt64, _ result: Result<MessagePage, StoreError>) {
        guard let (query, completion) = reads.removeValue(forKey: tag) else { return }
        switch result {
        case .success(let page):
            let gid: String
            switch query {
            case .older(let group, _, _), .newer(let group, _, _, _), .one(let group, _): gid = group
            }
            let detached = state.messages[gid]?.detachedReceipts ?? [:]
            let messages = page.records.compactMap { record -> ChatMessage? in
                guard var message = ChatState.message(id: record.id, record.value, users: state.users) else { return nil }
                if let receipts = detached[record.id]?.receivedBy { message.receivedBy.merge(receipts) { $1 } }
                return message
            }
            completion(messages, page.more)
        case .failure(let error):
            logger.error("reading stored messages failed: \(error)")
            completion(nil, false)
        }
    }

    /// Whether some reads still wait for the store.
    public var hasPendingReads: Bool { !reads.isEmpty }
}
