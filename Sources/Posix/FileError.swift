import Glibc

/// A failed file system call: what was being done, to which path, and the `errno` it left.
public struct FileError: Error, Sendable, Equatable, CustomStringConvertible {
    public let path: String
    /// The call in words, as the sentence uses it: "fsync", "rename data/tree.json.tmp over".
    public let operation: String
    public let errno: Int32

    public init(path: String, operation: String, errno: Int32) {
        self.path = path
        self.operation = operation
        self.errno = errno
    }

    public var description: String {
        let message = strerror(errno).map { String(cString: $0) } ?? "unknown error"
        return "could not \(operation) \(path): \(message) (errno \(errno))"
    }
}
