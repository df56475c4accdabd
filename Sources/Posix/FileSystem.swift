import Glibc

/// The one funnel for file system calls: the store's journal and snapshots, the secret, static
/// files, certificates written by `switchboard cert`.
///
/// Each function makes one syscall explicit, retries it on `EINTR`, and turns a failure into a
/// `FileError` that names the call and the path, so the operator reads
/// "could not fsync data/journal.jsonl: Input/output error".
public enum FileSystem {
    /// Opens `path`, returning nil when it does not exist and `flags` lacks `O_CREAT`.
    public static func openIfExists(_ path: String, flags: Int32, mode: mode_t = 0o600) throws(FileError) -> Int32? {
        while true {
            let fd = Glibc.open(path, flags | O_CLOEXEC, mode)
            if fd >= 0 { return fd }
            let code = errno
            if code == EINTR { continue }
            if code == ENOENT && flags & O_CREAT == 0 { return nil }
            throw FileError(path: path, operation: "open", errno: code)
        }
    }

    /// Opens `path`, failing if it does not exist (unless `flags` has `O_CREAT`).
    public static func open(_ path: String, flags: Int32, mode: mode_t = 0o600) throws(FileError) -> Int32 {
        guard let fd = try openIfExists(path, flags: flags, mode: mode) else {
            throw FileError(path: path, operation: "open", errno: ENOENT)
        }
        return fd
    }

    /// Closes a descriptor; errors are ignored because nothing written through it is pending
    /// (every file the store writes is fsynced before it is closed).
    public static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }

    /// Reads the whole file behind `fd` from its current offset.
    public static func readAll(_ fd: Int32, path: String) throws(FileError) -> [UInt8] {
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw FileError(path: path, operation: "stat", errno: errno) }
        // The size is a hint for one allocation; the loop still reads until end of file.
        var bytes = [UInt8](repeating: 0, count: max(Int(status.st_size), 0) + 1)
        var filled = 0
        while true {
            if filled == bytes.count {
                bytes.append(contentsOf: repeatElement(0, count: max(bytes.count, 4096)))
            }
            let result = bytes.withUnsafeMutableBytes { buffer in
                Glibc.read(fd, buffer.baseAddress! + filled, buffer.count - filled)
            }
            if result > 0 {
                filled += result
            } else if result == 0 {
                break
            } else if errno != EINTR {
                throw FileError(path: path, operation: "read", errno: errno)
            }
        }
        bytes.removeLast(bytes.count - filled)
        return bytes
    }

    /// Writes all of `bytes`, continuing after short writes.
    public static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws(FileError) {
        var offset = 0
        while offset < bytes.count {
            let result = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if result >= 0 {
                offset += result
            } else if errno != EINTR {
                throw FileError(path: path, operation: "write", errno: errno)
            }
        }
    }

    /// Writes all of `bytes`, continuing after short writes.
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws(FileError) {
        let result: Result<Void, FileError> = bytes.withUnsafeBytes { raw in
            Result { () throws(FileError) in try writeAll(fd, raw, path: path) }
        }
        try result.get()
    }

    /// Flushes data and metadata of `fd` to stable storage.
    public static func fsync(_ fd: Int32, path: String) throws(FileError) {
        while Glibc.fsync(fd) != 0 {
            if errno != EINTR { throw FileError(path: path, operation: "fsync", errno: errno) }
        }
    }

    /// Flushes the data of `fd` and the metadata needed to read it back (the file size), but
    /// not timestamps: for an append-only journal this is the durable part of fsync, cheaper.
    public static func fdatasync(_ fd: Int32, path: String) throws(FileError) {
        while Glibc.fdatasync(fd) != 0 {
            if errno != EINTR { throw FileError(path: path, operation: "fdatasync", errno: errno) }
        }
    }

    /// Cuts the file behind `fd` to `length` bytes.
    public static func truncate(_ fd: Int32, to length: Int, path: String) throws(FileError) {
        while ftruncate(fd, off_t(length)) != 0 {
            if errno != EINTR { throw FileError(path: path, operation: "truncate", errno: errno) }
        }
    }

    /// Atomically replaces `destination` with `source`.
    public static func rename(_ source: String, to destination: String) throws(FileError) {
        guard Glibc.rename(source, destination) == 0 else {
            throw FileError(path: destination, operation: "rename \(source) over", errno: errno)
        }
    }

    /// Removes `path`; returns false when it did not exist.
    @discardableResult
    public static func removeIfExists(_ path: String) throws(FileError) -> Bool {
        if unlink(path) == 0 { return true }
        if errno == ENOENT { return false }
        throw FileError(path: path, operation: "remove", errno: errno)
    }

    /// Creates `path` and any missing parents with `mode`; an existing directory is fine.
    public static func makeDirectories(_ path: String, mode: mode_t = 0o700) throws(FileError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += component
            if mkdir(prefix, mode) != 0 && errno != EEXIST {
                throw FileError(path: prefix, operation: "create folder", errno: errno)
            }
            prefix += "/"
        }
    }

    /// Fsyncs a directory, which makes renames and newly created entries in it durable.
    public static func syncDirectory(_ path: String) throws(FileError) {
        let fd = try open(path, flags: O_RDONLY | O_DIRECTORY)
        defer { close(fd) }
        try fsync(fd, path: path)
    }

    /// Takes an exclusive `flock` on `fd`; false when another holder keeps it for a second
    /// (tried every 10 ms).
    ///
    /// `flock` belongs to the open file description, so a second `open` of the lock file, in
    /// this process or another, conflicts; that is what refuses a second server. The wait is
    /// for holders of a moment: between its fork and its exec a child process holds a copy of
    /// every descriptor of its parent, the lock's included (a test that spawned a process
    /// beside another that closed a store and opened it again saw the lock still taken).
    public static func lockExclusively(_ fd: Int32, path: String) throws(FileError) -> Bool {
        var tries = 0
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            guard code == EWOULDBLOCK else { throw FileError(path: path, operation: "lock", errno: code) }
            guard tries < 100 else { return false }
            usleep(10_000)
            tries += 1
        }
        return true
    }

    /// The permission bits of `path`.
    public static func permissions(_ path: String) throws(FileError) -> mode_t {
        var status = stat()
        guard stat(path, &status) == 0 else { throw FileError(path: path, operation: "stat", errno: errno) }
        return status.st_mode & 0o7777
    }

    /// Writes `bytes` to `path`, replacing it, with permission bits exactly `mode`, and fsyncs it.
    ///
    /// `open` creates the file with `mode` itself, so a new private key is never readable by
    /// others; `fchmod` then also tightens a file that existed with a looser mode.
    public static func writeFile(_ bytes: [UInt8], to path: String, mode: mode_t) throws(FileError) {
        let fd = try open(path, flags: O_WRONLY | O_CREAT | O_TRUNC, mode: mode)
        defer { close(fd) }
        guard fchmod(fd, mode) == 0 else { throw FileError(path: path, operation: "set the mode of", errno: errno) }
        try writeAll(fd, bytes, path: path)
        try fsync(fd, path: path)
    }

    /// The whole file at `path`, or nil when it cannot be opened or read: for optional files
    /// read at start-up (static pages).
    public static func readFile(_ path: String) -> [UInt8]? {
        guard let fd = try? openIfExists(path, flags: O_RDONLY) else { return nil }
        defer { close(fd) }
        return try? readAll(fd, path: path)
    }
}
