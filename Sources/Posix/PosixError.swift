import Glibc

/// A failed system call: which call, and the `errno` it left.
public struct PosixError: Error, CustomStringConvertible, Sendable {
    public let call: String
    public let errno: Int32

    public init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    public var description: String {
        "\(call) failed: \(String(cString: strerror(errno))) (errno \(errno))"
    }
}

/// The one funnel every system call goes through.
///
/// Retries on `EINTR` (a signal interrupted the call and nothing happened), reports `EAGAIN`
/// as `nil` (the non-blocking call would block), and throws anything else naming the call.
@inline(__always)
func syscall<T: BinaryInteger>(_ name: String, _ body: () -> T) throws(PosixError) -> T? {
    while true {
        let result = body()
        if result >= 0 { return result }
        let error = Glibc.errno
        if error == EINTR { continue }
        if error == EAGAIN || error == EWOULDBLOCK { return nil }
        throw PosixError(call: name, errno: error)
    }
}
