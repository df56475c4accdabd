import Redis
import Store

/// Snapshots of the chat history in Redis, and the journal trimmed behind them (docs/cluster.md,
/// "Snapshots").
///
/// A snapshot is the whole history as journal lines (`ChatService.writeSnapshot`), in pieces of
/// about 1 MiB in a Redis list, with the id of the last journal entry it includes, in the hash
/// `switchboard:snapshot` (`id`, `key`, `pieces`). Once a node has read `snapshotEntries` entries
/// since the newest snapshot it knows, it takes `switchboard:snapshot:lock` and writes one; one
/// script then makes it the snapshot and trims the journal behind the one before it, so a node
/// that is a little behind still finds the entries it needs. A node whose position is older
/// than the snapshot (a new node, or one that was away) loads the snapshot first and reads the
/// journal from its id.
extension ClusterJournal {
    static let snapshotKey = "switchboard:snapshot"
    static let lockKey = "switchboard:snapshot:lock"
    /// List items per `LRANGE` while a snapshot loads.
    static let piecesPerRead = 16

    /// Looks for a snapshot newer than `position` and applies it, then calls `next`; without
    /// one, calls `next` at once. A snapshot that cannot be read (another node replaced it
    /// meanwhile, or the connection broke) is tried again a second later: the journal behind it
    /// may be trimmed, so reading on from `position` could leave a hole in the history.
    func loadSnapshot(then next: @escaping () -> Void) {
        let epoch = readerEpoch
        reader.send(["HMGET", Self.snapshotKey, "id", "key", "pieces"]) { [unowned self] result in
            // A connection lost meanwhile starts again from its `ready`.
            guard case .success(let answer) = result, epoch == readerEpoch else { return }
            guard case .array(let fields?) = answer, fields.count == 3, let id = fields[0].text,
                  let key = fields[1].text, let pieces = fields[2].text.flatMap({ Int($0) })
            else { return next() }
            noteSnapshot(id)
            guard Self.compare(id, position) > 0 else { return next() }
            logger.info("loading the cluster's snapshot", metadata: ["id": "\(id)", "pieces": "\(pieces)"])
            loadPieces(key, from: 0, count: pieces) { [unowned self] loaded in
                guard epoch == readerEpoch else { return }
                if loaded {
                    position = id
                    savePosition()
                    return next()
                }
                snapshotRetry = server.loop.schedule(afterMilliseconds: 1000) { [unowned self] in
                    snapshotRetry = nil
                    if epoch == readerEpoch { loadSnapshot(then: next) }
                }
            }
        }
    }

    private func loadPieces(_ key: String, from start: Int, count: Int, finished: @escaping (Bool) -> Void) {
        guard start < count else { return finished(true) }
        let end = min(count, start + Self.piecesPerRead) - 1
        reader.send(["LRANGE", key, String(start), String(end)]) { [unowned self] result in
            guard case .success(.array(let items?)) = result, items.count == end - start + 1 else {
                logger.warning("the cluster's snapshot could not be read: trying again", metadata: ["result": "\(result)"])
                return finished(false)
            }
            for item in items {
                guard let lines = item.bytes, service.applyReplica(lines) else { return finished(false) }
            }
            loadPieces(key, from: end + 1, count: count, finished: finished)
        }
    }

    /// A snapshot `id` exists: entries are counted from it.
    private func noteSnapshot(_ id: String) {
        guard snapshotId.map({ Self.compare(id, $0) > 0 }) ?? true else { return }
        snapshotId = id
        entriesSinceSnapshot = 0
    }

    /// Every second: learns of other nodes' snapshots, and writes one when enough entries came.
    func scheduleSnapshotCheck() {
        snapshotTimer = server.loop.schedule(afterMilliseconds: 1000) { [unowned self] in
            checkSnapshot()
            scheduleSnapshotCheck()
        }
    }

    private func checkSnapshot() {
        guard isReady, !isSnapshotting, entriesSinceSnapshot >= snapshotEntries else { return }
        writer.send(["HGET", Self.snapshotKey, "id"]) { [unowned self] result in
            if case .success(let value) = result, let id = value.text { noteSnapshot(id) }
            guard entriesSinceSnapshot >= snapshotEntries, !isSnapshotting else { return }
            let owner = String(decoding: origin, as: UTF8.self)
            writer.send(["SET", Self.lockKey, owner, "NX", "PX", "600000"]) { [unowned self] result in
                guard case .success(.simple("OK")) = result else { return }
                writeSnapshot(owner: owner)
            }
        }
    }

    /// Writes the state as of `position` to a new list and makes it the snapshot.
    /// A node whose data folder served a single node (it has a history and no journal
    /// position) and that finds the cluster empty (no snapshot, no journal) makes its history
    /// the cluster's: a snapshot before the journal's first entry, which every node that
    /// comes after starts from. Runs once, when the node has first caught up.
    func seedIfFirst() {
        guard let seed = historyToSeed else { return }
        historyToSeed = nil
        guard seed else { return }
        let owner = String(decoding: origin, as: UTF8.self)
        writer.send(["EVAL", Self.seedScript, "0", owner]) { [unowned self] result in
            guard case .success(.integer(1)) = result else { return }
            logger.notice("this node's history becomes the cluster's: the cluster had none")
            writeSnapshot(owner: owner, id: Self.seedId)
        }
    }

    /// The id of a seeding snapshot: before any entry.
    static let seedId = "0-1"

    /// Takes the snapshot lock for ARGV[1] when the cluster has neither a snapshot nor a
    /// journal entry: 1 when taken.
    static let seedScript = """
        if redis.call('EXISTS', '\(snapshotKey)') == 1 or redis.call('XLEN', '\(stream)') > 0 then return 0 end
        if redis.call('SET', '\(lockKey)', ARGV[1], 'NX', 'PX', '600000') then return 1 end
        return 0
        """

    private func writeSnapshot(owner: String, id: String? = nil) {
        isSnapshotting = true
        let id = id ?? position
        let key = "\(Self.snapshotKey):\(id)"
        let building = key + ":new"
        var pieces = 0
        var failed = false
        logger.info("writing a snapshot of the history", metadata: ["id": "\(id)"])
        writer.send(["DEL", building])
        service.writeSnapshot(piece: { [unowned self] lines, _ in
            pieces += 1
            writer.send([Array("RPUSH".utf8), Array(building.utf8), lines]) { result in
                if case .failure = result { failed = true }
            }
        }, finished: { [unowned self] complete in
            let arguments = [building, key, id, String(complete ? pieces : -1), owner]
            writer.send(["EVAL", Self.commitScript, "0"] + arguments) { [unowned self] result in
                isSnapshotting = false
                if complete, !failed, case .success(.integer(1)) = result {
                    noteSnapshot(id)
                    // A seeding snapshot lies ahead of a node that has read nothing: it holds
                    // this node's state, so there is nothing in it to load back.
                    if Self.compare(id, position) > 0 {
                        position = id
                        savePosition()
                    }
                    logger.info("snapshot written", metadata: ["id": "\(id)", "pieces": "\(pieces)"])
                } else {
                    logger.warning("the snapshot was not written", metadata: ["id": "\(id)", "result": "\(result)"])
                }
            }
        })
    }

    /// Makes the list ARGV[1] the snapshot ARGV[2] of entry ARGV[3] with ARGV[4] pieces (-1:
    /// abandoned), unless the list lost a piece or a newer snapshot exists; deletes the one before and trims the journal
    /// behind it; releases the lock of ARGV[5]. Answers 1 when the snapshot was made.
    static let commitScript = """
        local function older(a, b)
          local am, as = string.match(a, '(%d+)-(%d+)')
          local bm, bs = string.match(b, '(%d+)-(%d+)')
          am, as, bm, bs = tonumber(am), tonumber(as), tonumber(bm), tonumber(bs)
          return am < bm or (am == bm and as < bs)
        end
        local made = 0
        local previous = redis.call('HGET', '\(snapshotKey)', 'id')
        local old = redis.call('HGET', '\(snapshotKey)', 'key')
        local complete = tonumber(ARGV[4]) == 0 or redis.call('LLEN', ARGV[1]) == tonumber(ARGV[4])
        if tonumber(ARGV[4]) >= 0 and complete and (not previous or older(previous, ARGV[3])) then
          if tonumber(ARGV[4]) > 0 then redis.call('RENAME', ARGV[1], ARGV[2]) end
          redis.call('HSET', '\(snapshotKey)', 'id', ARGV[3], 'key', ARGV[2], 'pieces', ARGV[4])
          if old and old ~= ARGV[2] then redis.call('DEL', old) end
          if previous then redis.call('XTRIM', '\(stream)', 'MINID', previous) end
          made = 1
        end
        redis.call('DEL', ARGV[1])
        if redis.call('GET', '\(lockKey)') == ARGV[5] then redis.call('DEL', '\(lockKey)') end
        return made
        """

    /// Orders two stream ids: negative, zero or positive (what is not an id sorts first).
    static func compare(_ a: String, _ b: String) -> Int {
        let (x, y) = (streamID(a) ?? (0, 0), streamID(b) ?? (0, 0))
        return x < y ? -1 : (x == y ? 0 : 1)
    }

    /// The two numbers of a stream id (`milliseconds-sequence`); nil when `id` is not one.
    static func streamID(_ id: String) -> (milliseconds: UInt64, sequence: UInt64)? {
        guard let dash = id.utf8.firstIndex(of: UInt8(ascii: "-")), let milliseconds = UInt64(id[..<dash]),
              let sequence = UInt64(id[id.utf8.index(after: dash)...])
        else { return nil }
        return (milliseconds, sequence)
    }
}
