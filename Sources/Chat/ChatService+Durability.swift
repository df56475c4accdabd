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
        if let message {
            pendingMessages.append((ticket, message.group, message.message))
            if let clientId = message.message.clientId {
                pendingByClient[ClientMessageKey(user: message.message.user, clientId: clientId)] =
                    (ticket, message.group, message.message)
            }
        }
        if store.needsCompaction { compact() }
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
            if let clientId = pending.message.clientId {
                pendingByClient[ClientMessageKey(user: pending.message.user, clientId: clientId)] = nil
            }
            if succeeded {
                state.messages[pending.group, default: MessageLog()].insert(pending.message)
                state.noteClientId(of: pending.message, group: pending.group)
            }
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

    /// Queues a compaction with an O(1) copy-on-write snapshot of the state; the store's
    /// thread adds the messages that are appended but not yet durable and serializes it.
    ///
    /// The retention settings (`retentionMessages`, `retentionMilliseconds`) are applied here
    /// first, to the live history too: what the snapshot leaves out is gone from memory as well.
    public func compact() {
        applyRetention()
        let snapshot = state
        let pending = pendingMessages[pendingMessageHead...].map { ($0.group, $0.message) }
        let now = clock.seconds
        store.compact(writingSnapshot: { out in
            var full = snapshot
            for (group, message) in pending { full.messages[group, default: MessageLog()].insert(message) }
            full.writeTree(into: &out, now: now)
        })
    }

    private func applyRetention() {
        let limit = configuration.retentionMessages
        let age = configuration.retentionMilliseconds
        guard limit > 0 || age > 0 else { return }
        let cutoff = age > 0 ? clock.milliseconds() - age : 0
        var dropped = 0
        for gid in Array(state.messages.keys) {
            dropped += state.messages[gid]!.trim(keepingLast: limit, createdSince: cutoff)
        }
        if dropped > 0 { logger.info("retention: \(dropped) old messages dropped at compaction") }
    }
}
