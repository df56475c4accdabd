import Dispatch
import Glibc
import Logging
import Posix

/// The files of uploaded media, one per id in the data folder's `media/`, written and read on
/// worker threads so the event loop never waits on the disk.
///
/// A write goes to `<id>.tmp`, is fsynced, renamed to `<id>`, and the folder fsynced, before its
/// completion runs: once the server answers an upload, the file survives `kill -9` and power
/// loss (with `durability: none`, the two fsyncs are skipped). Writes run one at a time on one
/// serial queue, reads on another, so a large upload being flushed never holds up a download.
/// Reads are not cached here: the kernel's page cache keeps what is read often, and clients
/// cache for good (an id never changes content).
///
/// The record of each file (owner, type, size) lives in the document tree, not here; at start
/// `removeFiles(keeping:)` deletes what a crash left behind: temporary files, and files whose
/// record never became durable (an upload that was not answered) or was deleted.
///
/// Completions run on the worker threads; the server hands them to its loop. Sendable: every
/// field is immutable, and the queues serialize the work.
public final class MediaFiles: Sendable {
    /// The folder, without a trailing slash.
    public let directory: String
    let durability: Durability
    let logger: Logger
    private let writer = DispatchQueue(label: "switchboard.media.write")
    private let reader = DispatchQueue(label: "switchboard.media.read")

    static let temporarySuffix = ".tmp"

    /// Uses (and creates, when missing) the folder `directory`.
    public init(directory: String, durability: Durability, logger: Logger) throws(StoreError) {
        self.directory = directory
        self.durability = durability
        self.logger = logger
        try io(FileSystem.makeDirectories(directory))
    }

    /// Deletes every file of the folder whose name is not in `keep`, temporary files included;
    /// returns how many. Called once at start, before any upload.
    @discardableResult
    public func removeFiles(keeping keep: Set<String>) -> Int {
        var removed = 0
        for name in FileSystem.names(in: directory) where !keep.contains(name) {
            if (try? FileSystem.removeIfExists(directory + "/" + name)) == true { removed += 1 }
        }
        if removed > 0 { logger.info("media: removed \(removed) files without a record (left by a crash or a delete)") }
        return removed
    }

    /// Writes `bytes` as the file of `id` and makes it durable, then calls `completion` with
    /// nil, or with the error that stopped it (the temporary file is removed then).
    public func write(_ id: String, _ bytes: [UInt8], completion: @escaping @Sendable (StoreError?) -> Void) {
        writer.async { [self] in
            do throws(StoreError) {
                try writeDurably(id, bytes)
                completion(nil)
            } catch {
                _ = try? FileSystem.removeIfExists(path(id) + Self.temporarySuffix)
                logger.error("media: could not store \(id): \(error)")
                completion(error)
            }
        }
    }

    /// Reads the file of `id` and calls `completion` with its bytes, or nil when it cannot be
    /// read (deleted meanwhile, or a disk error).
    public func read(_ id: String, completion: @escaping @Sendable ([UInt8]?) -> Void) {
        reader.async { [self] in
            completion(FileSystem.readFile(path(id)))
        }
    }

    /// Removes the file of `id` (its record is already gone). A failure leaves a file without
    /// a record, which the next start removes.
    public func remove(_ id: String) {
        writer.async { [self] in
            do throws(StoreError) {
                _ = try io(FileSystem.removeIfExists(path(id)))
                if durability == .fsync { try io(FileSystem.syncDirectory(directory)) }
            } catch {
                logger.warning("media: could not remove \(id): \(error)")
            }
        }
    }

    /// Waits until every write and removal queued so far has finished (tests, shutdown).
    public func drain() {
        writer.sync {}
        reader.sync {}
    }

    func path(_ id: String) -> String {
        directory + "/" + id
    }

    private func writeDurably(_ id: String, _ bytes: [UInt8]) throws(StoreError) {
        let temporary = path(id) + Self.temporarySuffix
        let fd = try io(FileSystem.open(temporary, flags: O_WRONLY | O_CREAT | O_TRUNC, mode: 0o600))
        do throws(StoreError) {
            try io(FileSystem.writeAll(fd, bytes, path: temporary))
            if durability == .fsync { try io(FileSystem.fsync(fd, path: temporary)) }
        } catch {
            FileSystem.close(fd)
            throw error
        }
        FileSystem.close(fd)
        try io(FileSystem.rename(temporary, to: path(id)))
        if durability == .fsync { try io(FileSystem.syncDirectory(directory)) }
    }
}
