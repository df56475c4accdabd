import Glibc

extension Socket {
    /// Starts a non-blocking TCP connection to `host:port` (a name, an IPv4 or an IPv6
    /// address; the first address the name resolves to) with TCP_NODELAY. Returns the socket
    /// at once; the connection is made when the loop reports it writable, and `pendingError`
    /// then says whether it failed.
    ///
    /// A name is resolved with `getaddrinfo`, which blocks: cluster nodes name their Redis once
    /// at start and on a reconnect, where a resolver's delay is acceptable.
    public static func connect(host: String, port: Int) throws(PosixError) -> Int32 {
        try resolve(host: host, port: port) { (address) throws(PosixError) in
            try startConnect(to: address.pointee, host: host, port: port)
        }
    }

    /// Resolves `host:port` with `getaddrinfo` (TCP, any family) and hands the list of addresses
    /// to `body`, freeing it afterwards.
    static func resolve<T: ~Copyable>(
        host: String, port: Int, _ body: (UnsafeMutablePointer<addrinfo>) throws(PosixError) -> T
    ) throws(PosixError) -> T {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else {
            throw PosixError(call: "resolve \(host)", errno: EHOSTUNREACH)
        }
        defer { freeaddrinfo(first) }
        return try body(first)
    }

    private static func startConnect(to address: addrinfo, host: String, port: Int) throws(PosixError) -> Int32 {
        let fd = try syscall("socket") {
            Glibc.socket(address.ai_family, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
        }!
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        // EINPROGRESS is the expected answer of a non-blocking connect: the funnel would throw
        // it, so it is taken here before.
        while Glibc.connect(fd, address.ai_addr, address.ai_addrlen) != 0 {
            let error = Glibc.errno
            if error == EINTR { continue }
            if error == EINPROGRESS { break }
            Glibc.close(fd)
            throw PosixError(call: "connect(\(host):\(port))", errno: error)
        }
        return fd
    }

    /// The error a non-blocking `connect` ended with (`SO_ERROR`), nil when it succeeded.
    public static func pendingError(_ fd: Int32, call: String) -> PosixError? {
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 else {
            return PosixError(call: "getsockopt(SO_ERROR)", errno: Glibc.errno)
        }
        return error == 0 ? nil : PosixError(call: call, errno: error)
    }
}
