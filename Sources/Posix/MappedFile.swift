import Glibc

extension FileSystem {
    /// The whole file behind `fd`, mapped read-only: for a large file read once from start to
    /// end (a journal's replay), without a zeroed buffer to fill and a copy out of the page
    /// cache. The file must not shrink while mapped: a page past its new end would fault. On a
    /// file system that cannot map files (`ENODEV`) the bytes are read instead (`copy`).
    public static func map(_ fd: Int32, path: String) throws(FileError) -> MappedFile {
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw FileError(path: path, operation: "stat", errno: errno) }
        let count = Int(status.st_size)
        guard count > 0 else { return MappedFile(base: nil, count: 0, mapped: false) }
        let base = mmap(nil, count, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0)
        guard let base, base != MAP_FAILED else {
            let code = errno
            if code == ENODEV { return try copy(fd, count: count, path: path) }
            throw FileError(path: path, operation: "mmap", errno: code)
        }
        return MappedFile(base: base, count: count, mapped: true)
    }

    /// The first `count` bytes of the file behind `fd` (fewer if it is shorter), read into
    /// memory of their own: `map`'s way where mapping is not possible.
    static func copy(_ fd: Int32, count: Int, path: String) throws(FileError) -> MappedFile {
        let base = UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 16)
        var filled = 0
        while filled < count {
            let result = pread(fd, base + filled, count - filled, off_t(filled))
            if result > 0 {
                filled += result
            } else if result == 0 {
                break
            } else if errno != EINTR {
                let code = errno
                base.deallocate()
                throw FileError(path: path, operation: "read", errno: code)
            }
        }
        return MappedFile(base: base, count: filled, mapped: false)
    }
}

/// A file's bytes as `FileSystem.map` gives them, released (unmapped, or freed when they were
/// read) when the last reference goes.
public final class MappedFile {
    private let bytes: UnsafeRawBufferPointer
    private let mapped: Bool

    init(base: UnsafeMutableRawPointer?, count: Int, mapped: Bool) {
        bytes = UnsafeRawBufferPointer(start: base, count: count)
        self.mapped = mapped
    }

    /// Calls `body` with the bytes, which stay valid until it returns (and no longer).
    public func withBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try withExtendedLifetime(self) { () throws(Failure) -> Result in try body(bytes) }
    }

    deinit {
        guard let base = bytes.baseAddress else { return }
        if mapped {
            munmap(UnsafeMutableRawPointer(mutating: base), bytes.count)
        } else {
            base.deallocate()
        }
    }
}
