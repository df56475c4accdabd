import Glibc

extension FileSystem {
    /// The whole file behind `fd`, mapped read-only: for a large file read once from start to
    /// end (a journal's replay), without a zeroed buffer to fill and a copy out of the page
    /// cache. The file must not shrink while mapped: a page past its new end would fault. On a
    /// file system that cannot map files (`ENODEV`) the file is read instead (`readAll`).
    public static func map(_ fd: Int32, path: String) throws(FileError) -> MappedFile {
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw FileError(path: path, operation: "stat", errno: errno) }
        let count = Int(status.st_size)
        guard count > 0 else { return MappedFile(reading: []) }
        let base = mmap(nil, count, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0)
        guard let base, base != MAP_FAILED else {
            let code = errno
            if code == ENODEV { return MappedFile(reading: try readAll(fd, path: path)) }
            throw FileError(path: path, operation: "mmap", errno: code)
        }
        return MappedFile(mapping: UnsafeRawBufferPointer(start: base, count: count))
    }
}

/// A file's bytes as `FileSystem.map` gives them: mapped (unmapped when the last reference
/// goes), or read into memory where the file could not be mapped.
public final class MappedFile {
    private let mapping: UnsafeRawBufferPointer?
    private let read: [UInt8]

    init(mapping: UnsafeRawBufferPointer) {
        self.mapping = mapping
        read = []
    }

    init(reading bytes: [UInt8]) {
        mapping = nil
        read = bytes
    }

    /// Calls `body` with the bytes, which stay valid until it returns (and no longer).
    public func withBytes<Value, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Value
    ) throws(Failure) -> Value {
        if let mapping {
            return try withExtendedLifetime(self) { () throws(Failure) -> Value in try body(mapping) }
        }
        // `Array.withUnsafeBytes` rethrows untyped errors: the typed one travels in a `Result`.
        let result: Result<Value, Failure> = read.withUnsafeBytes { bytes in
            Result { () throws(Failure) -> Value in try body(bytes) }
        }
        return try result.get()
    }

    deinit {
        if let mapping, let base = mapping.baseAddress {
            munmap(UnsafeMutableRawPointer(mutating: base), mapping.count)
        }
    }
}
