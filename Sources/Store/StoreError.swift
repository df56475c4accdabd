import Posix

/// Why the store could not open, load or persist, as a sentence naming the file.
public enum StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Another process, or another `Store` in this one, holds the data folder's lock.
    case locked(directory: String)
    /// A file does not parse; `line` is 1-based. Nothing on disk was changed.
    case corrupt(file: String, line: Int, reason: String)
    /// A segment or index does not hold what its manifest says, found at byte `offset`.
    case corruptSegment(file: String, offset: Int, reason: String)
    /// A system call failed on `path`.
    case io(path: String, operation: String, errno: Int32)
    /// The secret file exists but cannot be used.
    case invalidSecret(path: String, reason: String)
    /// `append` or `compact` after `close()`.
    case closed

    /// A human sentence for logs and for the operator.
    public var description: String {
        switch self {
        case .locked(let directory):
            return "another switchboard is using data folder \(directory)"
        case .corrupt(let file, let line, let reason):
            return "\(file) line \(line) is corrupt: \(reason); fix or move the file away, nothing was changed"
        case .corruptSegment(let file, let offset, let reason):
            return "\(file) is corrupt at byte \(offset): \(reason); restore the folder from a backup"
        case .io(let path, let operation, let code):
            return FileError(path: path, operation: operation, errno: code).description
        case .invalidSecret(let path, let reason):
            return "the secret file \(path) cannot be used: \(reason)"
        case .closed:
            return "the store is closed"
        }
    }
}

/// Runs a file system call, reporting its failure as the store's `io` error.
@discardableResult
func io<T>(_ call: @autoclosure () throws(FileError) -> T) throws(StoreError) -> T {
    do {
        return try call()
    } catch {
        throw .io(path: error.path, operation: error.operation, errno: error.errno)
    }
}
