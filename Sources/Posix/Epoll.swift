import CLinux
import Glibc

/// The epoll system calls (the selector under the event loop).
enum Epoll {
    /// Events every socket is registered for, once, edge-triggered: readable, writable, peer
    /// half-close. Edge triggering means no `epoll_ctl` per write or read: the loop reads until
    /// `EAGAIN` and writes until the queue is empty or the socket is full, then waits for the next edge.
    static let socketEvents = EPOLLIN.rawValue | EPOLLOUT.rawValue | EPOLLRDHUP.rawValue | EPOLLET.rawValue

    static func create() throws(PosixError) -> Int32 {
        try syscall("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }!
    }

    static func add(_ epoll: Int32, fd: Int32, events: UInt32) throws(PosixError) {
        var event = epoll_event()
        event.events = events
        event.data.fd = fd
        _ = try syscall("epoll_ctl(ADD)") { epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event) }
    }

    static func remove(_ epoll: Int32, fd: Int32) {
        var event = epoll_event()
        _ = epoll_ctl(epoll, EPOLL_CTL_DEL, fd, &event)
    }

    /// Waits for events; returns how many were written into `events`.
    static func wait(
        _ epoll: Int32, events: UnsafeMutablePointer<epoll_event>, capacity: Int32, timeoutMilliseconds: Int32
    ) throws(PosixError) -> Int {
        Int(try syscall("epoll_wait") { epoll_wait(epoll, events, capacity, timeoutMilliseconds) } ?? 0)
    }
}

/// An eventfd: the way other threads wake the loop.
enum EventFD {
    static func create() throws(PosixError) -> Int32 {
        try syscall("eventfd") { eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC)) }!
    }

    static func signal(_ fd: Int32) {
        var one: UInt64 = 1
        _ = Glibc.write(fd, &one, 8)
    }

    static func drain(_ fd: Int32) {
        var value: UInt64 = 0
        _ = Glibc.read(fd, &value, 8)
    }
}

/// Process-wide signal set-up, done first thing in `main` before any thread starts.
public enum ProcessSignals {
    /// Blocks SIGTERM, SIGINT and SIGHUP (the loop reads them from signalfds instead) and
    /// ignores SIGPIPE.
    public static func prepare() {
        SignalFD.blockLoopSignals()
    }
}

/// signalfds for SIGTERM and SIGINT (shutdown) and SIGHUP (reload), so both are ordinary loop
/// events rather than work inside an async-signal handler.
enum SignalFD {
    static let shutdownSignals = [SIGTERM, SIGINT]
    static let reloadSignals = [SIGHUP]

    /// Blocks the signals in the calling thread (threads started later inherit the mask) and
    /// ignores SIGPIPE, so a write to a reset socket is an `EPIPE`, not a dead process. A blocked
    /// SIGHUP stays pending when nothing reads it, where its default action would end the process.
    static func blockLoopSignals() {
        signal(SIGPIPE, SIG_IGN)
        var mask = makeSet(shutdownSignals + reloadSignals)
        pthread_sigmask(SIG_BLOCK, &mask, nil)
    }

    static func create(_ signals: [Int32]) throws(PosixError) -> Int32 {
        var mask = makeSet(signals)
        return try syscall("signalfd") { signalfd(-1, &mask, Int32(SFD_NONBLOCK | SFD_CLOEXEC)) }!
    }

    /// Reads one pending signal number, or nil when none is pending.
    static func read(_ fd: Int32) -> Int32? {
        var info = signalfd_siginfo()
        let count = Glibc.read(fd, &info, MemoryLayout<signalfd_siginfo>.size)
        return count == MemoryLayout<signalfd_siginfo>.size ? Int32(info.ssi_signo) : nil
    }

    private static func makeSet(_ signals: [Int32]) -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for number in signals { sigaddset(&set, number) }
        return set
    }
}
