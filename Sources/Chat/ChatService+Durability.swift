import Dispatch
import Store

/// Group commit: changes go to the store, replies wait for `onDurable`.
extension ChatService {
    /// Appends `mutations` and runs `completion` with true once they are durable (false if
    /// the store could not make them so). Completions run in ticket order.
    func commit(_ mutations: [Mutation], completion: @escaping (Bool) -> Void) {
        committed(store.append(mutations), completion: completion)
    }

    /// Registers `completion` for a ticket the store already returned.
    func committed(_ ticket: UInt64, completion: @escaping (Bool) -> Void) {
        pending.add(ticket, completion: completion)
    }

    /// Registers `completion` and `message`, which joins the history of `group` once `ticket`
    /// is durable. The message is moved in: a copy would retain each of its strings.
    func committed(_ ticket: UInt64, message: consuming ChatMessage, in group: String,
                   completion: @escaping (Bool) -> Void) {
        pending.add(ticket, message: message, in: group, completion: completion)
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
        pending.removeMessages(through: ticket) { message, group, messageTicket in
            if succeeded {
                state.noteClientId(of: message, group: group)
                state.messages[group, default: MessageLog()].insert(message, ticket: messageTicket)
            } else if isReplicated {
                // The local store has it, the cluster may not: out of this node's copy too.
                // Should Redis have taken it after all, the journal brings it back.
                store.append(replica: Mutation.delete(path: ["Messages", group, message.id]).journalLine,
                             mutationCount: 1)
            }
        }
        // The completions run out of the queue: they may add to it, and what they add up to
        // `ticket` runs in this call too. A `finish` inside one (none does today) would find
        // the spare array taken and use a new one.
        var ready: [PendingCompletion] = []
        swap(&ready, &readyCompletions)
        while true {
            pending.removeCompletions(through: ticket, into: &ready)
            guard !ready.isEmpty else { break }
            for completion in ready { completion.run(succeeded) }
            ready.removeAll(keepingCapacity: true)
        }
        swap(&ready, &readyCompletions)
    }

    /// Whether some changes still wait for the disk.
    public var hasPendingWrites: Bool { pending.hasCompletions }

    /// A checkpoint is on disk: changes up to its ticket no longer need memory, each group
    /// keeps only its newest `store.recentMessages` of the messages it stored, and what
    /// retention deleted leaves memory too. Runs on the loop, told by the store's compactor
    /// thread through the loop's inbox.
    ///
    /// Also the moment for the chores that follow a checkpoint: the retention bound moves on
    /// with the clock, and revoked sessions whose tokens have expired are deleted.
    public func checkpointed(_ report: CheckpointReport) {
        var dropped: [MessageChunks.Removed] = []
        for (gid, deleted) in report.dropped {
            if let removed = state.messages[gid]?.forget(through: deleted.through, records: deleted.records), !removed.isEmpty {
                dropped.append(removed)
            }
        }
        for gid in Array(state.messages.keys) {
            let lastStored = report.lastIDs[gid]
            guard lastStored != nil || state.messages[gid]?.pinned.isEmpty == false
                || state.messages[gid]?.detachedReceipts.isEmpty == false
            else { continue }
            let removed = state.messages[gid]?.checkpointed(
                through: report.ticket, lastStored: lastStored, keeping: store.recentMessages)
            if let removed, !removed.isEmpty { dropped.append(removed) }
        }
        updateRetention()
        pruneExpiredRevocations()
        guard !dropped.isEmpty else { return }
        // Messages that left memory are found by their `clientId` through the store's index.
        // Walking a quarter of a million of them costs the loop milliseconds: skipped when no
        // message in memory has one.
        if !state.sentByClient.isEmpty {
            for removed in dropped {
                for message in removed where message.clientId != nil { state.forgetClientId(of: message) }
            }
        }
        // Freed on another thread, which empties the box itself: the chunks that left memory,
        // and the old array of each chunk a cut fell in (the messages of it that stay were
        // copied out). Capturing the arrays in the block was not enough: on a pinned core the
        // woken worker often ran the block at once, before this function released its own
        // reference, which was then the last, and the loop freed a checkpoint's worth of
        // messages after all (perf showed it).
        let garbage = MessageGarbage(dropped)
        dropped = []
        DispatchQueue.global(qos: .utility).async { garbage.free() }
    }

    /// Tells the store what its next checkpoints may delete: the retention bound moves on
    /// with the clock.
    func updateRetention() {
        guard configuration.retentionMessages > 0 || configuration.retentionMilliseconds > 0 else { return }
        store.retention = Self.retention(configuration, now: clock.milliseconds())
    }

    /// What the retention settings (`retentionMessages`, `retentionMilliseconds`) let the store
    /// delete at time `now` (milliseconds): the age bound as the lowest id of that moment.
    public static func retention(_ configuration: ChatConfiguration, now: Int64) -> MessageRetention {
        let age = configuration.retentionMilliseconds
        return MessageRetention(
            keepNewest: configuration.retentionMessages, before: age > 0 ? PushIDGenerator.lowestID(milliseconds: now - age) : nil)
    }

    /// Deletes the revocations whose tokens have expired (they can no longer be presented),
    /// so `Auth` does not grow with every sign-out.
    private func pruneExpiredRevocations() {
        let now = clock.seconds
        var mutations: [Mutation] = []
        for (uid, auth) in state.auth {
            for (sid, expiry) in auth.revoked where expiry <= now {
                mutations.append(.delete(path: ["Auth", uid, "revoked", sid]))
                state.auth[uid]?.revoked[sid] = nil
            }
        }
        if !mutations.isEmpty { commit(mutations) { _ in } }
    }

    /// Reads `query` on the store's reader thread; `completion` runs on the loop with the
    /// messages (converted, receipts not yet on disk laid over them), whether more lie beyond,
    /// and their group for `.sentBy`; the messages are nil if the read failed.
    func readStored(_ query: MessageQuery, completion: @escaping ([ChatMessage]?, Bool, String?) -> Void) {
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
            case .sentBy: gid = page.group ?? ""
            }
            let detached = state.messages[gid]?.detachedReceipts ?? [:]
            let messages = page.records.compactMap { record -> ChatMessage? in
                guard var message = ChatState.message(id: record.id, record.value, users: state.users) else { return nil }
                if let receipts = detached[record.id]?.receivedBy { message.receivedBy.merge(receipts) { $1 } }
                return message
            }
            completion(messages, page.more, page.group)
        case .failure(let error):
            logger.error("reading stored messages failed: \(error)")
            completion(nil, false, nil)
        }
    }

    /// Whether some reads still wait for the store.
    public var hasPendingReads: Bool { !reads.isEmpty }
}

/// Messages a checkpoint dropped from memory, handed to another thread to be freed there.
private final class MessageGarbage: @unchecked Sendable {
    // @unchecked: filled on the loop before the hand-off, emptied once on the worker after it.
    private var messages: [MessageChunks.Removed]

    init(_ messages: [MessageChunks.Removed]) {
        self.messages = messages
    }

    /// Frees the messages on the calling thread, whoever releases this box last.
    func free() {
        messages = []
    }
}
