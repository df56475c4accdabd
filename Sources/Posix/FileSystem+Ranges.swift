import CLinux
import Glibc

/// Positioned reads and writes, sizes and folder listings: what segment files need, whose
/// readers and writer share one file without sharing an offset.
extension FileSystem {
    /// Reads `count` bytes at `offset` with `pread`; fewer only when the file ends first.
    public static func read(_ fd: Int32, at offset: Int, count: Int, path: String) throws(FileError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let result = bytes.withUnsafeMutableBytes { buffer in
                pread(fd, buffer.baseAddress! + filled, count - filled, off_t(offset + filled))
            }
            if result > 0 {
                filled += result
            } else if result == 0 {
                break
            } else if errno != EINTR {
                throw FileError(path: path, operation: "read", errno: errno)
            }
        }
        bytes.removeLast(count - filled)
        return bytes
    }

    /// Writes all of `bytes` at `offset` with `pwrite`, continuing after short writes.
    public static func write(_ fd: Int32, _ bytes: [UInt8], at offset: Int, path: String) throws(FileError) {
        try write(fd, bytes[...], at: offset, path: path)
    }

    /// Writes all of a part of an array at `offset`, from where it lies (no copy).
    public static func write(_ fd: Int32, _ bytes: ArraySlice<UInt8>, at offset: Int, path: String) throws(FileError) {
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { buffer in
                pwrite(fd, buffer.baseAddress! + written, bytes.count - written, off_t(offset + written))
            }
            if result >= 0 {
                written += result
            } else if errno != EINTR {
                throw FileError(path: path, operation: "write", errno: errno)
            }
        }
    }

    /// The size in bytes of the file behind `fd`.
    public static func size(_ fd: Int32, path: String) throws(FileError) -> Int {
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw FileError(path: path, operation: "stat", errno: errno) }
        return Int(status.st_size)
    }

    /// Whether `path` names an existing file or folder.
    public static func exists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }

    /// The names in the folder at `path` (without `.` and `..`); empty when it does not exist.
    public static func list(_ path: String) throws(FileError) -> [String] {
        guard let directory = opendir(path) else {
            if errno == ENOENT { return [] }
            throw FileError(path: path, operation: "list", errno: errno)
        }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Removes the folder at `path` with everything in it; a missing folder is fine.
    public static func removeTree(_ path: String) throws(FileError) {
        var status = stat()
        guard lstat(path, &status) == 0 else {
            if errno == ENOENT { return }
            throw FileError(path: path, operation: "stat", errno: errno)
        }
        if status.st_mode & S_IFMT == S_IFDIR {
            for name in try list(path) {
                try removeTree(path + "/" + name)
            }
            guard rmdir(path) == 0 else { throw FileError(path: path, operation: "remove folder", errno: errno) }
        } else {
            try removeIfExists(path)
        }
    }
}

extension FileSystem {
    /// Writes the range's dirty pages to the device and waits for them (`sync_file_range`),
    /// without the device cache flush and metadata commit of `fdatasync`: a background writer
    /// paces its data onto the disk with it and flushes once at the end, so a latency-critical
    /// `fdatasync` elsewhere does not queue behind one cache flush per piece.
    public static func writeOut(_ fd: Int32, offset: Int, count: Int, path: String) throws(FileError) {
        while CLinux_write_out(fd, Int64(offset), Int64(count)) != 0 {
            if errno != EINTR { throw FileError(path: path, operation: "sync_file_range", errno: errno) }
        }
    }

    /// Flushes every file of the file system that holds `path` (`syncfs`): one call instead of
    /// an fsync for each of thousands of files written together.
    public static func syncFileSystem(_ path: String) throws(FileError) {
        let fd = try open(path, flags: O_RDONLY | O_DIRECTORY)
        defer { close(fd) }
        guard CLinux_syncfs(fd) == 0 else { throw FileError(path: path, operation: "syncfs", errno: errno) }
    }
}
