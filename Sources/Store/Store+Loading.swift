import Glibc
import Posix
import JSON
import Logging

/// Opening a data folder: lock, load the snapshot, replay the journal.
extension Store {
    /// Opens the data folder at `directory` and returns the store with the loaded tree.
    ///
    /// Creates the folder (mode 0700) when missing and locks it; a folder in use by another
    /// store fails with `.locked`. A missing `tree.json` means `DocumentTree.empty`. The journal
    /// is replayed line by line; a torn last line (no newline, or a last line that is not JSON)
    /// is the trace of a crash mid-write, was never acknowledged, and is cut off with a warning.
    /// Any other bad line, or a snapshot that does not parse, fails with `.corrupt` before a
    /// single byte on disk is changed. A leftover `tree.json.tmp` from a crashed compaction is
    /// removed after a successful load.
    public static func open(
        directory: String,
        durability: Durability = .fsync,
        compactAfterBytes: Int = 64 << 20,
        logger: Logger
    ) throws(StoreError) -> (store: Store, tree: JSONValue) {
        let start = SystemClock.monotonicNanoseconds()
        let directory = directory.count > 1 && directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        try io(FileSystem.makeDirectories(directory))
        let lockPath = directory + "/lock"
        let lockFD = try io(FileSystem.open(lockPath, flags: O_RDWR | O_CREAT, mode: 0o600))
        do throws(StoreError) {
            guard try io(FileSystem.lockExclusively(lockFD, path: lockPath)) else { throw StoreError.locked(directory: directory) }
            let snapshotPath = directory + "/tree.json"
            var (tree, snapshotBytes) = try loadSnapshot(path: snapshotPath)
            let journalPath = directory + "/journal.jsonl"
            let replay = try replayJournal(path: journalPath, into: &tree)
            let journalFD = try io(FileSystem.open(journalPath, flags: O_WRONLY | O_APPEND | O_CREAT, mode: 0o600))
            if replay.tornBytes > 0 {
                logger.warning(
                    "cut a torn last line of \(replay.tornBytes) bytes from \(journalPath) (a crash during a write; it was never acknowledged)"
                )
                try io(FileSystem.truncate(journalFD, to: replay.goodLength, path: journalPath))
                try io(FileSystem.fsync(journalFD, path: journalPath))
            }
            try io(FileSystem.removeIfExists(directory + "/tree.json.tmp"))
            // Makes the lock file and a newly created journal's directory entries durable, so
            // lines fsynced into the journal cannot vanish with its name.
            try io(FileSystem.syncDirectory(directory))
            let store = Store(
                directory: directory, durability: durability, compactAfterBytes: compactAfterBytes,
                logger: logger, lockFD: lockFD, journalFD: journalFD, journalLength: replay.goodLength,
                snapshotBytes: snapshotBytes
            )
            try store.startThread()
            let milliseconds = Double(SystemClock.monotonicNanoseconds() - start) / 1e6
            logger.info(
                "store loaded: \(replay.lines) journal lines in \(Int(milliseconds)) ms",
                metadata: ["directory": "\(directory)", "snapshotBytes": "\(snapshotBytes)", "journalBytes": "\(replay.goodLength)"]
            )
            return (store, tree)
        } catch {
            FileSystem.close(lockFD)
            throw error
        }
    }

    /// Reads and parses `tree.json`; a missing file is the empty tree.
    private static func loadSnapshot(path: String) throws(StoreError) -> (JSONValue, Int) {
        guard let fd = try io(FileSystem.openIfExists(path, flags: O_RDONLY)) else {
            return (DocumentTree.empty, 0)
        }
        defer { FileSystem.close(fd) }
        let bytes = try io(FileSystem.readAll(fd, path: path))
        let tree: JSONValue
        do {
            tree = try JSONValue.parse(bytes, limits: .trustedFile)
        } catch {
            throw StoreError.corrupt(file: path, line: lineNumber(of: error.offset, in: bytes), reason: "\(error)")
        }
        guard case .object = tree else {
            throw StoreError.corrupt(file: path, line: 1, reason: "the snapshot is not a JSON object")
        }
        return (tree, bytes.count)
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

    /// Applies every line of the journal at `path` to `tree`, without changing the file.
    static func replayJournal(path: String, into tree: inout JSONValue) throws(StoreError) -> Replay {
        guard let fd = try io(FileSystem.openIfExists(path, flags: O_RDONLY)) else { return Replay() }
        let bytes: [UInt8]
        do throws(StoreError) {
            bytes = try io(FileSystem.readAll(fd, path: path))
        } catch {
            FileSystem.close(fd)
            throw error
        }
        FileSystem.close(fd)
        var replay = Replay()
        let result: Result<Void, StoreError> = bytes.withUnsafeBytes { raw in
            Result { () throws(StoreError) in
                try replayLines(raw, path: path, into: &tree, replay: &replay)
            }
        }
        try result.get()
        return replay
    }

    private static func replayLines(
        _ raw: UnsafeRawBufferPointer, path: String, into tree: inout JSONValue, replay: inout Replay
    ) throws(StoreError) {
        var lineStart = 0
        var lineNumber = 0
        while lineStart < raw.count {
            lineNumber += 1
            let remaining = UnsafeRawBufferPointer(rebasing: raw[lineStart...])
            guard let newline = remaining.firstIndex(of: 0x0A) else {
                // No newline after the last line: its write never completed, so it was never
                // acknowledged, whatever it contains.
                replay.tornBytes = raw.count - lineStart
                return
            }
            let lineEnd = lineStart + newline
            let isLastLine = lineEnd + 1 == raw.count
            let line = UnsafeRawBufferPointer(rebasing: raw[lineStart..<lineEnd])
            lineStart = lineEnd + 1
            if line.isEmpty {
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
            DocumentTree.apply(mutation, to: &tree)
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
    private static func lineNumber(of offset: Int, in bytes: [UInt8]) -> Int {
        var line = 1
        for byte in bytes[..<min(offset, bytes.count)] where byte == 0x0A {
            line += 1
        }
        return line
    }
}
