import Glibc

/// A blocking TCP client socket with a timeout on every call, for short one-shot exchanges
/// outside any event loop (`switchboard health`).
///
/// Blocking is the point: a probe sends one request and reads one answer, so an event loop would
/// only add code. `SO_SNDTIMEO` bounds `connect` and `write`, `SO_RCVTIMEO` bounds each `read`,
/// so a server that accepts and then hangs cannot hang the probe.
public struct BlockingSocket: ~Copyable {
    private let fd: Int32

    private init(fd: Int32) {
        self.fd = fd
    }

    deinit {
        Glibc.close(fd)
    }

    /// Connects to `host:port` (a name, an IPv4 or an IPv6 address), trying each address the
    /// name resolves to in turn, each within `timeoutSeconds`.
    public static func connect(host: String, port: Int, timeoutSeconds: Int) throws(PosixError) -> BlockingSocket {
        try Socket.resolve(host: host, port: port) { (first) throws(PosixError) in
            try connect(first, host: host, port: port, timeoutSeconds: timeoutSeconds)
        }
    }

    /// Tries each address of the list from `first` in turn.
    private static func connect(
        _ first: UnsafeMutablePointer<addrinfo>, host: String, port: Int, timeoutSeconds: Int
    ) throws(PosixError) -> BlockingSocket {
        var lastError = PosixError(call: "connect(\(host):\(port))", errno: EHOSTUNREACH)
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let address = entry {
            entry = address.pointee.ai_next
            do throws(PosixError) {
                let fd = try syscall("socket") {
                    Glibc.socket(address.pointee.ai_family, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
                }!
                let socket = BlockingSocket(fd: fd)
                var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
                let size = socklen_t(MemoryLayout<timeval>.size)
                setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, size)
                setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, size)
                // A connect that times out fails with EINPROGRESS, which the funnel throws;
                // EAGAIN, which it returns as nil, here means no local port was free.
                guard try syscall("connect(\(host):\(port))", {
                    Glibc.connect(fd, address.pointee.ai_addr, address.pointee.ai_addrlen)
                }) != nil else {
                    throw PosixError(call: "connect(\(host):\(port))", errno: EAGAIN)
                }
                return socket
            } catch {
                lastError = error
            }
        }
        throw lastError
    }

    /// Writes every byte.
    public func write(_ bytes: [UInt8]) throws(PosixError) {
        var offset = 0
        while offset < bytes.count {
            guard let written = try syscall("write", {
                bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            }) else {
                throw PosixError(call: "write", errno: ETIMEDOUT)
            }
            offset += written
        }
    }

    /// Reads until the peer closes, or until `limit` bytes arrived.
    public func readToEnd(limit: Int) throws(PosixError) -> [UInt8] {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while received.count < limit {
            guard let count = try syscall("read", {
                buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            }) else {
                throw PosixError(call: "read", errno: ETIMEDOUT)
            }
            if count == 0 { break }
            received += buffer[0..<count]
        }
        return Array(received.prefix(limit))
    }
}
