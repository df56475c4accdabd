import Glibc

/// One request and the start of its answer over a blocking TCP connection, for worker threads
/// only (the webhook sender): it resolves the host, connects, writes the whole request, and
/// reads until the first line of the answer has arrived. Every step is bounded by the timeout;
/// nothing here may run on an event loop thread.
public enum BlockingExchange {
    /// Sends `request` to `host:port` and returns the answer's first line (an HTTP status line)
    /// without its line end. Throws the failed call: resolution, connect, a write or a read,
    /// with `ETIMEDOUT` when the peer took longer than `timeoutMilliseconds` for one step.
    public static func firstLine(
        of request: [UInt8], host: String, port: Int, timeoutMilliseconds: Int
    ) throws(PosixError) -> String {
        let fd = try connect(host: host, port: port, timeoutMilliseconds: timeoutMilliseconds)
        defer { Glibc.close(fd) }
        var sent = 0
        while sent < request.count {
            let written = try syscall("send") {
                request.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            }
            guard let written else { throw PosixError(call: "send", errno: ETIMEDOUT) }
            sent += written
        }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        while !answer.contains(UInt8(ascii: "\n")) && answer.count < 8192 {
            let count = try syscall("recv") {
                buffer.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, $0.count, 0) }
            }
            guard let count else { throw PosixError(call: "recv", errno: ETIMEDOUT) }
            if count == 0 { break }
            answer.append(contentsOf: buffer[0..<count])
        }
        let line = answer.prefix { $0 != UInt8(ascii: "\n") && $0 != UInt8(ascii: "\r") }
        return String(decoding: line, as: UTF8.self)
    }

    /// A blocking socket connected to the first address of `host` that accepts, with send and
    /// receive timeouts (Linux applies the send timeout to `connect` too).
    private static func connect(host: String, port: Int, timeoutMilliseconds: Int) throws(PosixError) -> Int32 {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let list else { throw PosixError(call: "getaddrinfo(\(host))", errno: ENOENT) }
        defer { freeaddrinfo(list) }
        var timeout = timeval(tv_sec: timeoutMilliseconds / 1000, tv_usec: (timeoutMilliseconds % 1000) * 1000)
        var lastError = PosixError(call: "connect(\(host):\(port))", errno: EHOSTUNREACH)
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let address = entry {
            entry = address.pointee.ai_next
            let fd = Glibc.socket(address.pointee.ai_family, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { continue }
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            do {
                _ = try syscall("connect(\(host):\(port))") { Glibc.connect(fd, address.pointee.ai_addr, address.pointee.ai_addrlen) }
                return fd
            } catch {
                lastError = error
                Glibc.close(fd)
            }
        }
        throw lastError
    }
}
