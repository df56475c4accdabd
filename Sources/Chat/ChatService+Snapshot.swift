import JSON
import Store

/// Cluster mode (docs/cluster.md, "Snapshots"): the whole state as journal lines, for the
/// snapshot a new node starts from instead of the whole journal.
extension ChatService {
    /// Writes every record as a `set` journal line, in pieces of about `pieceBytes` handed to
    /// `piece` with their count of lines, then calls `finished(true)`; `finished(false)` when a
    /// read of stored messages failed.
    ///
    /// Users, credentials, groups and media go first, at once. Each group's messages follow,
    /// the ones only on disk read off the loop page by page (oldest first), then those in
    /// memory. What changes meanwhile may or may not be in the pieces: the snapshot holds at
    /// least the state of the moment it started, and replaying the journal from that moment
    /// over it gives the same state (every change is idempotent).
    public func writeSnapshot(pieceBytes: Int = 1 << 20, piece: @escaping ([UInt8], Int) -> Void,
                              finished: @escaping (Bool) -> Void) {
        let writer = SnapshotPieces(pieceBytes: pieceBytes, piece: piece)
        let now = clock.seconds
        for (uid, user) in state.users { writer.add(.set(path: ["Users", uid], value: user.treeValue)) }
        for (uid, record) in state.auth { writer.add(.set(path: ["Auth", uid], value: record.treeValue(now: now))) }
        for (gid, group) in state.groups { writer.add(.set(path: ["Groups", gid], value: group.treeValue(online: nil))) }
        for (id, record) in state.media { writer.add(.set(path: ["Media", id], value: record.treeValue)) }
        snapshotMessages(ArraySlice(state.messages.keys.sorted()), writer, finished)
    }

    private func snapshotMessages(_ groups: ArraySlice<String>, _ writer: SnapshotPieces, _ finished: @escaping (Bool) -> Void) {
        guard let gid = groups.first else {
            writer.flush()
            return finished(true)
        }
        snapshotGroup(gid, after: nil, writer) { [self] succeeded in
            guard succeeded else { return finished(false) }
            snapshotMessages(groups.dropFirst(), writer, finished)
        }
    }

    /// Writes group `gid`'s messages after `after`: pages of those only on disk, then the
    /// ones in memory. A checkpoint that moved messages out of memory during a read sends the
    /// walk back to the disk from where it was.
    private func snapshotGroup(_ gid: String, after: String?, _ writer: SnapshotPieces, _ finished: @escaping (Bool) -> Void) {
        guard let log = state.messages[gid] else { return finished(true) }
        guard log.olderOnDisk > 0 else {
            snapshotMemory(gid, after: after, writer)
            return finished(true)
        }
        let evictions = log.evictions
        readStored(.newer(group: gid, after: after, before: log.messages.first?.id, limit: 10_000)) { [self] messages, more, _ in
            guard let messages else { return finished(false) }
            for message in messages { writer.add(.set(path: ["Messages", gid, message.id], value: message.treeValue)) }
            let last = messages.last?.id ?? after
            if more || state.messages[gid]?.evictions != evictions {
                snapshotGroup(gid, after: last, writer, finished)
            } else {
                snapshotMemory(gid, after: last, writer)
                finished(true)
            }
        }
    }

    private func snapshotMemory(_ gid: String, after: String?, _ writer: SnapshotPieces) {
        guard let log = state.messages[gid] else { return }
        for message in log.messages where after.map({ message.id > $0 }) ?? true {
            writer.add(.set(path: ["Messages", gid, message.id], value: message.treeValue))
        }
    }
}

/// Journal lines gathered into pieces of about `pieceBytes`.
private final class SnapshotPieces {
    let pieceBytes: Int
    let piece: ([UInt8], Int) -> Void
    var bytes: [UInt8] = []
    var lines = 0

    init(pieceBytes: Int, piece: @escaping ([UInt8], Int) -> Void) {
        self.pieceBytes = pieceBytes
        self.piece = piece
    }

    func add(_ mutation: Mutation) {
        mutation.appendJournalLine(to: &bytes)
        lines += 1
        if bytes.count >= pieceBytes { flush() }
    }

    func flush() {
        guard lines > 0 else { return }
        piece(bytes, lines)
        bytes = []
        lines = 0
    }
}
