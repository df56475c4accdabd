import CLinux
import Glibc

/// The socket system calls. Every socket is non-blocking and close-on-exec.
public enum Socket {
    /// Opens a listening TCP socket on `host:port` (`port` 0 picks a free one) and returns it
    /// with the port actually bound.
    public static func listen(host: String, port: Int, backlog: Int32 = 4096) throws(PosixError) -> (fd: Int32, port: Int) {
        var storage = sockaddr_storage()
        let length: socklen_t
        let family: Int32
        if host.contains(":") {
            family = AF_INET6
            length = try withUnsafeMutableBytes(of: &storage) { raw throws(PosixError) in
                let address = raw.baseAddress!.assumingMemoryBound(to: sockaddr_in6.self)
                address.pointee.sin6_family = sa_family_t(AF_INET6)
                address.pointee.sin6_port = UInt16(port).bigEndian
                guard inet_pton(AF_INET6, host, &address.pointee.sin6_addr) == 1 else {
                    throw PosixError(call: "inet_pton(\(host))", errno: EINVAL)
                }
                return socklen_t(MemoryLayout<sockaddr_in6>.size)
            }
        } else {
            family = AF_INET
            length = try withUnsafeMutableBytes(of: &storage) { raw throws(PosixError) in
                let address = raw.baseAddress!.assumingMemoryBound(to: sockaddr_in.self)
                address.pointee.sin_family = sa_family_t(AF_INET)
                address.pointee.sin_port = UInt16(port).bigEndian
                guard inet_pton(AF_INET, host == "localhost" ? "127.0.0.1" : host, &address.pointee.sin_addr) == 1 else {
                    throw PosixError(call: "inet_pton(\(host))", errno: EINVAL)
                }
                return socklen_t(MemoryLayout<sockaddr_in>.size)
            }
        }
        let fd = try syscall("socket") {
            Glibc.socket(family, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
        }!
        do {
            var one: Int32 = 1
            _ = try syscall("setsockopt(SO_REUSEADDR)") {
                setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
            }
            _ = try syscall("bind(\(host):\(port))") {
                withUnsafePointer(to: &storage) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
                }
            }
            _ = try syscall("listen") { Glibc.listen(fd, backlog) }
            return (fd, try boundPort(fd))
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    static func boundPort(_ fd: Int32) throws(PosixError) -> Int {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = try syscall("getsockname") {
            withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
        }
        return withUnsafeBytes(of: &storage) { raw in
            // sin_port and sin6_port sit at the same offset, right after the family.
            Int(UInt16(bigEndian: raw.load(fromByteOffset: 2, as: UInt16.self)))
        }
    }

    /// Accepts one pending connection, non-blocking with TCP_NODELAY (chat frames are small and
    /// latency-bound; the write queue already batches). Returns nil when none is pending.
    public static func accept(_ listener: Int32) throws(PosixError) -> Int32? {
        guard let fd = try syscall("accept4", {
            CLinux_accept4(listener, Int32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue))
        }) else { return nil }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        return fd
    }

    /// The peer's IP address as text (`203.0.113.7`, `2001:db8::1`), the key of per-address
    /// limits; "unknown" when the socket has no IP peer (a socketpair in tests).
    public static func peerAddress(_ fd: Int32) -> String {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        }
        guard named == 0 else { return "unknown" }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = Int32(storage.ss_family)
        let converted: UnsafePointer<CChar>? = withUnsafePointer(to: &storage) { raw in
            switch family {
            case AF_INET:
                raw.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                    var bytes = address.pointee.sin_addr
                    return inet_ntop(AF_INET, &bytes, &text, socklen_t(text.count))
                }
            case AF_INET6:
                raw.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                    var bytes = address.pointee.sin6_addr
                    return inet_ntop(AF_INET6, &bytes, &text, socklen_t(text.count))
                }
            default:
                nil
            }
        }
        guard converted != nil else { return "unknown" }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Writes what the socket takes at once, ignoring the rest and any error: a last word
    /// (a refusal) to a connection about to be closed.
    public static func writeOnce(_ fd: Int32, _ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
    }

    /// Reads into `buffer`. Returns the byte count (0 at end of stream), or nil when nothing is
    /// available yet.
    ///
    /// `recv` rather than `read`, and `send` rather than a `writev` of one buffer below: the
    /// socket calls skip the file layer (`vfs_read`, `fdget_pos`, the iovec import), which
    /// `perf` put at 2 to 3% of the server's time when every message is written on its own.
    public static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(PosixError) -> Int? {
        try syscall("recv") { Glibc.recv(fd, buffer.baseAddress, buffer.count, 0) }
    }

    /// Writes `buffer`; returns how many bytes went out, or nil when the socket is full.
    public static func send(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) throws(PosixError) -> Int? {
        try syscall("send") { Glibc.send(fd, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Writes the buffers in order with one call; returns how many bytes went out, or nil when
    /// the socket is full.
    public static func writev(_ fd: Int32, _ vectors: UnsafePointer<iovec>, count: Int32) throws(PosixError) -> Int? {
        try syscall("writev") { Glibc.writev(fd, vectors, count) }
    }

    /// Shuts the sending side, so the peer reads end of stream after everything queued.
    public static func shutdownWrite(_ fd: Int32) {
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
    }

    public static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }

    /// Raises the soft open-file limit to the hard limit (10,000 connections need more than
    /// the usual 1,024 descriptors). Returns the limit now in force.
    public static func raiseFileLimit() -> Int {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        return Int(limit.rlim_cur)
    }
}
