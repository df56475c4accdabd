import Glibc
import Posix
import JSON
import Logging

/// Opening a data folder: lock, migrate or create it, apply leftover journals, load what is hot.
extension Store {
    /// Opens the data folder at `directory` and returns the store with the tree it holds,
    /// where each group under `Messages` has only its newest `recentMessages` messages (the
    /// rest are read with `read`).
    ///
    /// Creates the folder (mode 0700) when missing and locks it; a folder in use by another
    /// store fails with `.locked`. A folder in the first layout (`tree.json`, `journal.jsonl`)
    /// is migrated first (`migrate`). Then every journal the manifest does not cover is
    /// replayed; a torn last line (no newline, or a last line that is not JSON) is the trace of
    /// a crash mid-write, was never acknowledged, and is dropped with a warning. Any other bad
    /// line, or a manifest or document that does not parse, fails with `.corrupt` before a
    /// single byte on disk is changed. Only then are the journals applied as one checkpoint,
    /// so the store starts with an empty journal, and leftovers of a crashed checkpoint are
    /// removed. Start-up reads the manifest, the small documents, the journals and the ends of
    /// the segments: its time does not grow with the number of stored messages.
    ///
    /// `idempotencyFields` names the two fields of a message record that the segment indexes
    /// carry, for `mayHaveStored` and `.sentBy` reads; `retention` is what the start-up
    /// checkpoint and the later ones may delete until `retention` is set again.
    public static func open(
        directory: String,
        durability: Durability = .fsync,
        compactAfterBytes: Int = 64 << 20,
        segmentBytes: Int = 1 << 20,
        recentMessages: Int = 200,
        idempotencyFields: IdempotencyFields? = nil,
        retention: MessageRetention = MessageRetention(),
        logger: Logger
    ) throws(StoreError) -> (store: Store, tree: JSONValue) {
        let start = SystemClock.monotonicNanoseconds()
        let directory = directory.count > 1 && directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        try io(FileSystem.makeDirectories(directory))
        let lockPath = directory + "/lock"
        let lockFD = try io(FileSystem.open(lockPath, flags: O_RDWR | O_CREAT, mode: 0o600))
        do throws(StoreError) {
            guard try io(FileSystem.lockExclusively(lockFD, path: lockPath)) else { throw StoreError.locked(directory: directory) }
            let layout = StoreLayout(directory: directory)
            if !FileSystem.exists(layout.manifest) {
                // Only a checkpoint sets a journal aside, and a checkpoint has a manifest: without
                // one, such a journal has nothing to apply to, and migrating would delete it.
                if let aside = try io(FileSystem.list(directory)).first(where: { StoreLayout.rotatedGeneration($0) != nil }) {
                    throw StoreError.corrupt(file: layout.manifest, line: 1, reason: "it is missing, yet \(aside) is here")
                }
                // Documents or segments without a manifest are a migration that was cut short
                // only if it left its marker; otherwise the manifest was lost, and migrating
                // would delete the history it indexed.
                for folder in [layout.documents, layout.messages]
                where !FileSystem.exists(layout.migrationMarker) && FileSystem.exists(folder) {
                    if !(try io(FileSystem.list(folder))).isEmpty {
                        throw StoreError.corrupt(file: layout.manifest, line: 1, reason: "it is missing, yet \(folder) holds files")
                    }
                }
                if FileSystem.exists(layout.legacySnapshot) || FileSystem.exists(layout.journal) {
                    try migrate(layout, segmentBytes: segmentBytes, keyFields: idempotencyFields, logger: logger)
                } else {
                    try create(layout, segmentBytes: segmentBytes, logger: logger)
                }
            }
            let checkpoint = try loadCheckpoint(layout, segmentBytes: segmentBytes, keyFields: idempotencyFields, logger: logger)
            checkpoint.retention = retention
            // Each group's newest records are read before anything on disk changes, so that a
            // corrupt segment end stops the start with the folder as it was; the groups the
            // journals then write are read again.
            var windows = try recentWindows(checkpoint.files, groups: Array(checkpoint.manifest.groups.keys), count: recentMessages)
            let (lines, generation, written) = try applyJournals(layout, checkpoint, logger: logger)
            try removeLeftovers(layout, checkpoint.manifest)
            let journalFD = try io(FileSystem.open(layout.journal, flags: O_WRONLY | O_CREAT, mode: 0o600))
            // Makes the lock file and the new journal's directory entries durable, so lines
            // fsynced into the journal cannot vanish with its name.
            try io(FileSystem.syncDirectory(directory))
            let rewritten = written.filter { checkpoint.manifest.groups[$0] != nil }
            windows.merge(try recentWindows(checkpoint.files, groups: rewritten, count: recentMessages)) { $1 }
            var messages: [String: JSONValue] = [:]
            for gid in checkpoint.manifest.groups.keys { messages[gid] = windows[gid] ?? .object([:]) }
            var root = checkpoint.documents.objectValue ?? [:]
            root["Messages"] = .object(messages)
            let store = Store(
                layout: layout, durability: durability, compactAfterBytes: compactAfterBytes, recentMessages: recentMessages,
                logger: logger, lockFD: lockFD, journalFD: journalFD, generation: generation, checkpoint: checkpoint)
            checkpoint.paced = true
            store.retentionValue = retention
            try store.startThreads()
            let milliseconds = Double(SystemClock.monotonicNanoseconds() - start) / 1e6
            logger.info(
                "store loaded: \(lines) journal lines in \(Int(milliseconds)) ms",
                metadata: ["directory": "\(directory)", "groups": "\(messages.count)"]
            )
            return (store, .object(root))
        } catch {
            FileSystem.close(lockFD)
            throw error
        }
    }

    /// Per group, its newest `count` messages on disk as an object.
    private static func recentWindows(_ files: MessageFiles, groups: [String], count: Int) throws(StoreError) -> [String: JSONValue] {
        var windows: [String: JSONValue] = [:]
        for gid in groups {
            var window: [String: JSONValue] = [:]
            for (mid, value) in try files.newest(gid, count: count) { window[mid] = value }
            windows[gid] = .object(window)
        }
        return windows
    }

    /// Writes the checkpoint of an empty tree into a new folder.
    private static func create(_ layout: StoreLayout, segmentBytes: Int, logger: Logger) throws(StoreError) {
        let files = MessageFiles(layout: layout, catalogs: [:])
        let checkpoint = Checkpoint(
            layout: layout, files: files, manifest: Manifest(), documents: .object([:]), segmentBytes: segmentBytes,
            keyFields: nil, logger: logger)
        try checkpoint.apply(.set(path: [], value: DocumentTree.empty))
        _ = try checkpoint.commit(generation: 0)
    }

    /// Reads the manifest and the documents it names.
    private static func loadCheckpoint(
        _ layout: StoreLayout, segmentBytes: Int, keyFields: IdempotencyFields?, logger: Logger
    ) throws(StoreError) -> Checkpoint {
        let manifestValue = try parseFile(layout.manifest)
        let manifest: Manifest
        do throws(Mutation.DecodingError) {
            manifest = try Manifest(manifestValue)
        } catch {
            throw .corrupt(file: layout.manifest, line: 1, reason: error.reason)
        }
        var documents: [String: JSONValue] = [:]
        for key in manifest.documents {
            let path = layout.document(key)
            guard FileSystem.exists(path) else {
                throw .corrupt(file: layout.manifest, line: 1, reason: "it names \(path), which is missing")
            }
            documents[key] = try parseFile(path)
        }
        let files = MessageFiles(layout: layout, catalogs: manifest.groups)
        return Checkpoint(
            layout: layout, files: files, manifest: manifest, documents: .object(documents), segmentBytes: segmentBytes,
            keyFields: keyFields, logger: logger)
    }

    /// Replays every journal newer than the manifest into `checkpoint` and, when there was
    /// any, commits it; returns the lines applied, the generation the files now cover and the
    /// groups the commit wrote or let retention shorten.
    private static func applyJournals(
        _ layout: StoreLayout, _ checkpoint: Checkpoint, logger: Logger
    ) throws(StoreError) -> (Int, Int, [String]) {
        let covered = checkpoint.manifest.generation
        let names = try io(FileSystem.list(layout.directory))
        let rotated = names.compactMap(StoreLayout.rotatedGeneration).filter { $0 > covered }.sorted()
        var paths = rotated.map(layout.rotatedJournal)
        let current = FileSystem.exists(layout.journal)
        if current { paths.append(layout.journal) }
        var lines = 0
        var torn: [(String, Int)] = []
        for path in paths {
            let replay = try replayJournal(path: path) { mutation throws(StoreError) in try checkpoint.apply(mutation) }
            lines += replay.lines
            if replay.tornBytes > 0 { torn.append((path, replay.tornBytes)) }
        }
        // Everything parsed: from here on the folder changes.
        for (path, bytes) in torn {
            logger.warning("cut a torn last line of \(bytes) bytes from \(path) (a crash during a write; it was never acknowledged)")
        }
        guard !paths.isEmpty else { return (0, covered, []) }
        var generation = max(covered, rotated.last ?? 0)
        if current {
            generation += 1
            try io(FileSystem.rename(layout.journal, to: layout.rotatedJournal(generation)))
            try io(FileSystem.syncDirectory(layout.directory))
        }
        let outcome = try checkpoint.commit(generation: generation)
        for old in names.compactMap(StoreLayout.rotatedGeneration) + [generation] where old <= generation {
            _ = try io(FileSystem.removeIfExists(layout.rotatedJournal(old)))
        }
        return (lines, generation, Array(Set(outcome.lastIDs.keys).union(outcome.dropped.keys)))
    }

    /// Removes what a crash left behind: temporary files, a first-layout snapshot the migration
    /// had converted and its marker, journals the manifest covers, and
    /// segment files and group folders it does not name. Bytes past a segment's committed
    /// length stay until the next append cuts them off; nothing reads them.
    private static func removeLeftovers(_ layout: StoreLayout, _ manifest: Manifest) throws(StoreError) {
        _ = try io(FileSystem.removeIfExists(layout.temporaryManifest))
        _ = try io(FileSystem.removeIfExists(layout.spareJournal))
        _ = try io(FileSystem.removeIfExists(layout.legacySnapshot))
        _ = try io(FileSystem.removeIfExists(layout.legacyTemporarySnapshot))
        _ = try io(FileSystem.removeIfExists(layout.migrationMarker))
        for name in try io(FileSystem.list(layout.directory)) {
            if let generation = StoreLayout.rotatedGeneration(name), generation <= manifest.generation {
                _ = try io(FileSystem.removeIfExists(layout.rotatedJournal(generation)))
            }
        }
        for name in try io(FileSystem.list(layout.documents)) where name.hasSuffix(".tmp") {
            _ = try io(FileSystem.removeIfExists(layout.documents + "/" + name))
        }
        var known: [String: Set<String>] = [:]
        for (gid, catalog) in manifest.groups {
            var names: Set<String> = []
            for segment in catalog.segments {
                names.insert(StoreLayout.sequenceName(segment.sequence) + ".jsonl")
                names.insert(StoreLayout.sequenceName(segment.sequence) + ".idx")
            }
            known[StoreLayout.fileName(gid)] = names
        }
        for folder in try io(FileSystem.list(layout.messages)) {
            guard let names = known[folder] else {
                try io(FileSystem.removeTree(layout.messages + "/" + folder))
                continue
            }
            for name in try io(FileSystem.list(layout.messages + "/" + folder)) where !names.contains(name) {
                _ = try io(FileSystem.removeIfExists(layout.messages + "/" + folder + "/" + name))
            }
        }
    }

    /// Reads and parses a whole JSON file.
    static func parseFile(_ path: String) throws(StoreError) -> JSONValue {
        let fd = try io(FileSystem.open(path, flags: O_RDONLY))
        defer { FileSystem.close(fd) }
        let bytes = try io(FileSystem.readAll(fd, path: path))
        do {
            return try JSONValue.parse(bytes, limits: .trustedFile)
        } catch {
            throw StoreError.corrupt(file: path, line: lineNumber(of: error.offset, in: bytes), reason: "\(error)")
        }
    }

    /// What replaying the journal found.
    struct Replay {
        /// Lines applied.
        var lines = 0
        /// Bytes up to and including the last good newline.
        var goodLength = 0
        /// Bytes after `goodLength` that belong to a torn last line.
        var tornBytes = 0
    }

    /// Calls `apply` with every mutation of the journal at `path`, without changing the file.
    /// Zero bytes at the end are the unused part of a spare journal's zeros, not a torn line.
    /// With `wholeMessage`, a line that sets one whole message (`MessageLine`) goes there as
    /// its group, its id's bytes and its value's bytes instead of being parsed: for a
    /// checkpoint's journal, which this process wrote.
    static func replayJournal(
        path: String, wholeMessage: ((String, UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Void)? = nil,
        apply: (Mutation) throws(StoreError) -> Void
    ) throws(StoreError) -> Replay {
        guard let fd = try io(FileSystem.openIfExists(path, flags: O_RDONLY)) else { return Replay() }
        let file: MappedFile
        do throws(StoreError) {
            file = try io(FileSystem.map(fd, path: path))
        } catch {
            FileSystem.close(fd)
            throw error
        }
        FileSystem.close(fd)
        var replay = Replay()
        try file.withBytes { bytes throws(StoreError) in
            // A word at a time first: a spare journal's unused zeros run to a megabyte.
            var end = bytes.count
            while end >= 8 && bytes.loadUnaligned(fromByteOffset: end - 8, as: UInt64.self) == 0 { end -= 8 }
            while end > 0 && bytes[end - 1] == 0 { end -= 1 }
            try replayLines(UnsafeRawBufferPointer(rebasing: bytes[..<end]), path: path, wholeMessage: wholeMessage, apply: apply,
                            replay: &replay)
        }
        return replay
    }

    private static func replayLines(
        _ raw: UnsafeRawBufferPointer, path: String, wholeMessage: ((String, UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Void)?,
        apply: (Mutation) throws(StoreError) -> Void, replay: inout Replay
    ) throws(StoreError) {
        var lineStart = 0
        var lineNumber = 0
        while lineStart < raw.count {
            lineNumber += 1
            guard let newlineAt = memchr(raw.baseAddress! + lineStart, 0x0A, raw.count - lineStart) else {
                // No newline after the last line: its write never completed, so it was never
                // acknowledged, whatever it contains.
                replay.tornBytes = raw.count - lineStart
                return
            }
            let lineEnd = raw.baseAddress!.distance(to: UnsafeRawPointer(newlineAt))
            let isLastLine = lineEnd + 1 == raw.count
            let line = UnsafeRawBufferPointer(rebasing: raw[lineStart..<lineEnd])
            lineStart = lineEnd + 1
            if line.isEmpty {
                replay.goodLength = lineStart
                continue
            }
            if let wholeMessage, let parts = MessageLine.parse(line) {
                let group = String(decoding: UnsafeRawBufferPointer(rebasing: line[parts.group]), as: UTF8.self)
                wholeMessage(group, UnsafeRawBufferPointer(rebasing: line[parts.id]), UnsafeRawBufferPointer(rebasing: line[parts.value]))
                replay.lines += 1
                replay.goodLength = lineStart
                continue
            }
            let value: JSONValue
            do {
                value = try JSONValue.parse(line, limits: journalLineLimits)
            } catch {
                if isLastLine {
                    replay.tornBytes = line.count + 1
                    return
                }
                throw StoreError.corrupt(file: path, line: lineNumber, reason: "\(error)")
            }
            let mutation: Mutation
            do {
                mutation = try Mutation(journalLine: value)
            } catch {
                throw StoreError.corrupt(file: path, line: lineNumber, reason: error.reason)
            }
            guard mutation.path.count < journalLineLimits.maxDepth else {
                let reason = "a path of \(mutation.path.count) keys; at most \(journalLineLimits.maxDepth - 1) are replayed"
                throw StoreError.corrupt(file: path, line: lineNumber, reason: reason)
            }
            try apply(mutation)
            replay.lines += 1
            replay.goodLength = lineStart
        }
    }

    /// How deep a journal line may nest, and (less one) how many keys its path may hold.
    ///
    /// Half a snapshot's depth each, so that a path and the value written at its end never make
    /// a tree deeper than a snapshot may be: every tree a journal builds can be compacted into
    /// a snapshot that loads again. The chat service's lines nest a few dozen levels at most.
    static let journalLineLimits = JSONLimits(maxDepth: JSONLimits.trustedFile.maxDepth / 2, maxBytes: Int.max)

    /// The 1-based line of byte `offset` in `bytes`, for error messages.
    static func lineNumber(of offset: Int, in bytes: [UInt8]) -> Int {
        var line = 1
        for byte in bytes[..<min(offset, bytes.count)] where byte == 0x0A {
            line += 1
        }
        return line
    }
}
