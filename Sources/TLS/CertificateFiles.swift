import Glibc

/// The few file operations `SelfSignedCertificate` needs, kept apart so the TLS target's only
/// direct syscalls are these start-time, command-line ones (never on a connection's path).
///
/// The key file is created with mode 0600 by `open` itself, so there is no moment at which a
/// freshly generated private key is readable by other users.
enum CertificateFiles {
    /// Creates `path` (mode 0755) unless it already exists as a directory.
    static func makeDirectory(_ path: String) throws(TLSError) {
        if mkdir(path, 0o755) == 0 {
            return
        }
        let code = errno
        var status = stat()
        if code == EEXIST, stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
            return
        }
        throw failure("could not create the directory", path: path, errno: code)
    }

    /// Writes `bytes` to `path`, replacing it, with permission bits exactly `mode`.
    static func write(_ bytes: [UInt8], to path: String, mode: mode_t) throws(TLSError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard descriptor >= 0 else {
            throw failure("could not create the file", path: path, errno: errno)
        }
        defer { _ = Glibc.close(descriptor) }
        // open() applies the umask and leaves an existing file's mode alone; fchmod makes the
        // mode exactly what was asked, which matters for the private key.
        guard fchmod(descriptor, mode) == 0 else {
            throw failure("could not set the file mode", path: path, errno: errno)
        }
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { buffer in
                Glibc.write(descriptor, buffer.baseAddress.map { $0 + written }, bytes.count - written)
            }
            if result < 0 {
                let code = errno
                if code == EINTR {
                    continue
                }
                throw failure("could not write the file", path: path, errno: code)
            }
            written += result
        }
        guard fsync(descriptor) == 0 else {
            throw failure("could not flush the file to disk", path: path, errno: errno)
        }
    }

    /// An error carrying the system's description of `errno`.
    private static func failure(_ summary: String, path: String, errno code: Int32) -> TLSError {
        let reason = strerror(code).map { String(cString: $0) } ?? "errno \(code)"
        return TLSError(kind: .certificateGeneration, summary: summary, path: path, reasons: [reason])
    }
}
