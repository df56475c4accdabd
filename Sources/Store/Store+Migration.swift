import Glibc
import JSON
import Logging
import Posix

/// Converting a folder of the first layout (`tree.json` + `journal.jsonl`) into segments.
extension Store {
    /// Writes the checkpoint of the tree that `tree.json` plus `journal.jsonl` hold, then
    /// removes those two files.
    ///
    /// The old files stay untouched until the new manifest is renamed into place, and a start
    /// only migrates while there is no manifest (and, when new files are there, while the
    /// marker `migrating` written first says they are a migration's), so a crash at any point either leaves the old
    /// layout (whose half-written new files the next start removes before it begins again) or
    /// the new one (whose leftover old files it removes). The snapshot is converted one group
    /// at a time: each group's messages are parsed, joined with that group's journal lines and
    /// written out before the next is read, so a snapshot of ten million messages never exists
    /// in memory as values. A journal that replaces the whole tree or all of `Messages` (only
    /// a hand-written one does) makes the migration load the tree whole instead.
    static func migrate(_ layout: StoreLayout, segmentBytes: Int, keyFields: IdempotencyFields?, logger: Logger) throws(StoreError) {
        let start = SystemClock.monotonicNanoseconds()
        logger.notice("converting \(layout.directory) from tree.json and journal.jsonl to segments (once)")
        try io(FileSystem.writeFile([], to: layout.migrationMarker, mode: 0o600))
        try io(FileSystem.syncDirectory(layout.directory))
        try io(FileSystem.removeTree(layout.documents))
        try io(FileSystem.removeTree(layout.messages))
        _ = try io(FileSystem.removeIfExists(layout.temporaryManifest))
        var journal: [Mutation] = []
        let replay = try replayJournal(path: layout.journal) { mutation throws(StoreError) in journal.append(mutation) }
        if replay.tornBytes > 0 {
            logger.warning("cut a torn last line of \(replay.tornBytes) bytes from \(layout.journal) (a crash during a write; it was never acknowledged)")
        }
        let files = MessageFiles(layout: layout, catalogs: [:])
        let checkpoint = Checkpoint(
            layout: layout, files: files, manifest: Manifest(), documents: .object([:]), segmentBytes: segmentBytes,
            keyFields: keyFields, logger: logger)
        let wholeTree = journal.contains { $0.path.isEmpty || ($0.path.first == "Messages" && $0.path.count < 2) }
        var byGroup: [String: [Mutation]] = [:]
        var others: [Mutation] = []
        for mutation in journal where !wholeTree {
            if mutation.path.first == "Messages" { byGroup[mutation.path[1], default: []].append(mutation) } else { others.append(mutation) }
        }
        if let fd = try io(FileSystem.openIfExists(layout.legacySnapshot, flags: O_RDONLY)) {
            let bytes: [UInt8]
            do throws(StoreError) {
                bytes = try io(FileSystem.readAll(fd, path: layout.legacySnapshot))
            } catch {
                FileSystem.close(fd)
                throw error
            }
            FileSystem.close(fd)
            if wholeTree {
                try checkpoint.apply(.set(path: [], value: parseSnapshot(bytes, layout.legacySnapshot)))
            } else {
                let result: Result<Void, StoreError> = bytes.withUnsafeBytes { raw in
                    Result { () throws(StoreError) in
                        try convertSnapshot(raw, bytes, layout.legacySnapshot, into: checkpoint, journal: &byGroup)
                    }
                }
                try result.get()
            }
        } else {
            try checkpoint.apply(.set(path: [], value: DocumentTree.empty))
        }
        for mutation in wholeTree ? journal : others { try checkpoint.apply(mutation) }
        for (gid, mutations) in byGroup.sorted(by: { $0.key < $1.key }) {
            for mutation in mutations { try checkpoint.apply(mutation) }
            try checkpoint.flush(gid)
        }
        _ = try checkpoint.commit(generation: 0)
        // The journal first: a crash before its removal replays it over the new files, which
        // changes nothing (mutations are idempotent); a leftover tree.json is simply removed.
        _ = try io(FileSystem.removeIfExists(layout.journal))
        _ = try io(FileSystem.removeIfExists(layout.legacySnapshot))
        _ = try io(FileSystem.removeIfExists(layout.legacyTemporarySnapshot))
        _ = try io(FileSystem.removeIfExists(layout.migrationMarker))
        try io(FileSystem.syncDirectory(layout.directory))
        let milliseconds = Double(SystemClock.monotonicNanoseconds() - start) / 1e6
        let groups = checkpoint.manifest.groups.values
        let messages = groups.reduce(0) { $0 + $1.recordCount }
        let bytes = groups.reduce(0) { total, group in total + group.segments.reduce(0) { $0 + $1.bytes + $1.indexBytes } }
        logger.notice(
            "converted \(layout.directory): \(groups.count) groups, \(messages) messages, \(bytes) bytes of segments and indexes in \(Int(milliseconds)) ms"
        )
    }

    /// Converts the snapshot branch by branch, each group with its own journal lines (which
    /// leave `journal`, so that what remains belongs to groups the snapshot does not have).
    private static func convertSnapshot(
        _ raw: UnsafeRawBufferPointer, _ bytes: [UInt8], _ path: String, into checkpoint: Checkpoint,
        journal: inout [String: [Mutation]]
    ) throws(StoreError) {
        let members: [(key: Range<Int>, value: Range<Int>)]
        do {
            members = try JSONSpans.members(raw, in: 0..<raw.count)
        } catch {
            throw StoreError.corrupt(file: path, line: lineNumber(of: error.offset, in: bytes), reason: error.reason)
        }
        for (keyRange, valueRange) in members {
            guard let key = try parse(raw, keyRange, bytes, path).stringValue else { continue }
            guard key == "Messages", raw[valueRange.lowerBound] == UInt8(ascii: "{") else {
                try checkpoint.apply(.set(path: [key], value: parse(raw, valueRange, bytes, path)))
                continue
            }
            let groups: [(key: Range<Int>, value: Range<Int>)]
            do {
                groups = try JSONSpans.members(raw, in: valueRange)
            } catch {
                throw StoreError.corrupt(file: path, line: lineNumber(of: error.offset, in: bytes), reason: error.reason)
            }
            for (groupKey, groupValue) in groups {
                guard let gid = try parse(raw, groupKey, bytes, path).stringValue else { continue }
                try checkpoint.apply(.set(path: ["Messages", gid], value: parse(raw, groupValue, bytes, path)))
                for mutation in journal.removeValue(forKey: gid) ?? [] { try checkpoint.apply(mutation) }
                try checkpoint.flush(gid)
            }
        }
    }

    private static func parse(_ raw: UnsafeRawBufferPointer, _ range: Range<Int>, _ bytes: [UInt8], _ path: String) throws(StoreError) -> JSONValue {
        do {
            return try JSONValue.parse(UnsafeRawBufferPointer(rebasing: raw[range]), limits: .trustedFile)
        } catch {
            throw StoreError.corrupt(file: path, line: lineNumber(of: range.lowerBound + error.offset, in: bytes), reason: "\(error)")
        }
    }

    private static func parseSnapshot(_ bytes: [UInt8], _ path: String) throws(StoreError) -> JSONValue {
        let tree: JSONValue
        do {
            tree = try JSONValue.parse(bytes, limits: .trustedFile)
        } catch {
            throw StoreError.corrupt(file: path, line: lineNumber(of: error.offset, in: bytes), reason: "\(error)")
        }
        guard case .object = tree else {
            throw StoreError.corrupt(file: path, line: 1, reason: "the snapshot is not a JSON object")
        }
        return tree
    }
}
