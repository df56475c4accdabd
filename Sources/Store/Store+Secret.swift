import Glibc
import Posix

/// The server's signing secret, kept in the data folder.
extension Store {
    /// Returns the contents of `directory/named`, creating it first with `bytes` random bytes
    /// from `/dev/urandom`, mode 0600, when it does not exist.
    ///
    /// The new file is written under a temporary name, fsynced and renamed into place, so a
    /// crash never leaves a short secret behind (one that would silently weaken every token).
    /// An existing secret readable by group or others is used, with a warning.
    public func readOrCreateSecret(named name: String = "secret", bytes count: Int = 32) throws(StoreError) -> [UInt8] {
        let path = directory + "/" + name
        if let fd = try io(FileSystem.openIfExists(path, flags: O_RDONLY)) {
            defer { FileSystem.close(fd) }
            let secret = try io(FileSystem.readAll(fd, path: path))
            guard secret.count >= 32 else {
                throw StoreError.invalidSecret(path: path, reason: "it holds \(secret.count) bytes, fewer than 32")
            }
            if try io(FileSystem.permissions(path)) & 0o077 != 0 {
                logger.warning("the secret file \(path) is readable by other users; chmod 600 it")
            }
            return secret
        }
        let secret = try Self.randomBytes(count)
        let temporaryPath = path + ".tmp"
        let fd = try io(FileSystem.open(temporaryPath, flags: O_WRONLY | O_CREAT | O_TRUNC, mode: 0o600))
        do throws(StoreError) {
            // open's mode is filtered by the umask, which can only remove bits; fchmod states
            // the intent exactly.
            fchmod(fd, 0o600)
            try io(FileSystem.writeAll(fd, secret, path: temporaryPath))
            try io(FileSystem.fsync(fd, path: temporaryPath))
            FileSystem.close(fd)
        } catch {
            FileSystem.close(fd)
            throw error
        }
        try io(FileSystem.rename(temporaryPath, to: path))
        try io(FileSystem.syncDirectory(directory))
        logger.info("created a new secret in \(path)")
        return secret
    }

    /// `count` bytes from the kernel's random source.
    static func randomBytes(_ count: Int) throws(StoreError) -> [UInt8] {
        let source = "/dev/urandom"
        let fd = try io(FileSystem.open(source, flags: O_RDONLY))
        defer { FileSystem.close(fd) }
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let result = bytes.withUnsafeMutableBytes { buffer in
                Glibc.read(fd, buffer.baseAddress! + filled, count - filled)
            }
            if result > 0 {
                filled += result
            } else if result < 0 && errno == EINTR {
                continue
            } else {
                throw StoreError.io(path: source, operation: "read", errno: result < 0 ? errno : EIO)
            }
        }
        return bytes
    }
}
