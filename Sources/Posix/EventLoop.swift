import CLinux
import Glibc
import Synchronization

/// A single-threaded epoll event loop: sockets, timers, cross-thread work and end-of-iteration
/// flushes.
///
/// Everything except `execute(_:)` and `stop()` must be called on the loop thread (the thread
/// running `run()`). Those two are safe from any thread: they touch only the mutex-guarded
/// inbox and the eventfd, which is why the type is `@unchecked Sendable`.
public final class EventLoop: @unchecked Sendable {
    private let epoll: Int32
    private let wakeFD: Int32
    private var handlers: [(any EventHandler)?] = []
    private var timers = TimerHeap()
    private var nextTimerID: UInt64 = 0
    private var pendingFlush: [any Flushable] = []
    /// The batches being flushed, resumed and run: swapped with the pending ones, so the two
    /// buffers take turns instead of a copy being allocated every iteration.
    private var flushing: [any Flushable] = []
    private var resuming: [Int32] = []
    private var running: [@Sendable () -> Void] = []
    /// Sockets whose handler stopped reading at its budget with bytes left (`readLater`), in
    /// order, each once (`readDeferred` marks them by descriptor).
    private var pendingReads: [Int32] = []
    private var readDeferred: [Bool] = []
    private let inbox = Mutex<[@Sendable () -> Void]>([])
    private let stopRequested = Atomic<Bool>(false)

    /// The loop's cached monotonic time in nanoseconds, refreshed once per iteration.
    ///
    /// Computed from an internal stored property: every access to a public stored property
    /// pays a run-time exclusivity check (the compiler cannot see the other modules' accesses),
    /// and this one is read several times per message (docs/architecture.md, "Exclusivity
    /// checks on the message path").
    public var now: UInt64 { time }
    private var time: UInt64 = SystemClock.monotonicNanoseconds()

    /// One shared read buffer: a read callback reads into it and must consume or copy the
    /// bytes before returning, so 10,000 idle connections cost no read buffers at all.
    public let readBuffer: UnsafeMutableRawBufferPointer

    /// Scratch `iovec`s for `WriteQueue.flush`, shared for the same reason.
    public let vectors: UnsafeMutableBufferPointer<iovec>

    public init() throws(PosixError) {
        epoll = try Epoll.create()
        wakeFD = try EventFD.create()
        readBuffer = .allocate(byteCount: 256 * 1024, alignment: 16)
        vectors = .allocate(capacity: 256)
        try Epoll.add(epoll, fd: wakeFD, events: EPOLLIN.rawValue | EPOLLET.rawValue)
    }

    deinit {
        Glibc.close(epoll)
        Glibc.close(wakeFD)
        readBuffer.deallocate()
        vectors.deallocate()
    }

    /// Watches `fd` (edge-triggered, read and write) and calls `handler` when it is ready.
    public func register(_ fd: Int32, _ handler: any EventHandler) throws(PosixError) {
        let index = Int(fd)
        if index >= handlers.count {
            handlers.append(contentsOf: repeatElement(nil, count: index - handlers.count + 1))
        }
        handlers[index] = handler
        try Epoll.add(epoll, fd: fd, events: Epoll.socketEvents)
    }

    /// Stops watching `fd`; call before closing it.
    public func deregister(_ fd: Int32) {
        Epoll.remove(epoll, fd: fd)
        if Int(fd) < handlers.count { handlers[Int(fd)] = nil }
    }

    /// Calls `readable(hangup: false)` on `fd`'s handler again in the next iteration, after
    /// the other sockets' events and the due timers: for a handler that stopped at its read
    /// budget with bytes still waiting, which edge triggering would not report again. Asking
    /// twice before that call counts once.
    public func readLater(_ fd: Int32) {
        let index = Int(fd)
        if index >= readDeferred.count {
            readDeferred.append(contentsOf: repeatElement(false, count: index - readDeferred.count + 1))
        }
        guard !readDeferred[index] else { return }
        readDeferred[index] = true
        pendingReads.append(fd)
    }

    /// Calls `body` with the signal number on every SIGTERM or SIGINT (which
    /// `ProcessSignals.prepare()` must have blocked first).
    public func onShutdownSignal(_ body: @escaping (Int32) -> Void) throws(PosixError) {
        let fd = try SignalFD.create(SignalFD.shutdownSignals)
        try register(fd, SignalHandler(fd: fd, body: body))
    }

    /// Calls `body` on every SIGHUP (which `ProcessSignals.prepare()` must have blocked first),
    /// the conventional "read your files again" signal of `systemctl reload` and `docker kill -s HUP`.
    public func onReloadSignal(_ body: @escaping () -> Void) throws(PosixError) {
        let fd = try SignalFD.create(SignalFD.reloadSignals)
        try register(fd, SignalHandler(fd: fd, body: { _ in body() }))
    }

    /// Runs `body` on the loop thread after `milliseconds`. Returns an id for `cancel`.
    @discardableResult
    public func schedule(afterMilliseconds milliseconds: Int, _ body: @escaping () -> Void) -> UInt64 {
        nextTimerID += 1
        timers.insert(.init(deadline: now + UInt64(max(0, milliseconds)) * 1_000_000, id: nextTimerID, body: body))
        return nextTimerID
    }

    public func cancel(timer id: UInt64) {
        timers.cancel(id)
    }

    /// Asks for `target.flush()` at the end of this iteration (once, however often it is asked:
    /// the target keeps its own "already pending" flag).
    public func flushLater(_ target: any Flushable) {
        pendingFlush.append(target)
    }

    /// Runs `work` on the loop thread soon. Safe from any thread.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        let wasEmpty = inbox.withLock { queue in
            queue.append(work)
            return queue.count == 1
        }
        if wasEmpty { EventFD.signal(wakeFD) }
    }

    /// Makes `run()` return after the current iteration. Safe from any thread.
    public func stop() {
        stopRequested.store(true, ordering: .releasing)
        EventFD.signal(wakeFD)
    }

    /// Runs the loop on the calling thread until `stop()`.
    public func run() throws(PosixError) {
        let capacity: Int32 = 1024
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: Int(capacity))
        defer { events.deallocate() }
        while !stopRequested.load(ordering: .acquiring) {
            let count = try Epoll.wait(epoll, events: events, capacity: capacity, timeoutMilliseconds: waitTimeout())
            time = SystemClock.monotonicNanoseconds()
            for index in 0..<count {
                let event = events[index]
                let fd = event.data.fd
                if fd == wakeFD {
                    EventFD.drain(wakeFD)
                    runInbox()
                    continue
                }
                dispatch(fd: fd, events: event.events)
            }
            runDueTimers()
            runPendingReads()
            flushPending()
        }
    }

    /// Resumes the reads deferred before this iteration; the ones they defer again wait for
    /// the next, so one busy socket never holds the loop.
    private func runPendingReads() {
        guard !pendingReads.isEmpty else { return }
        swap(&pendingReads, &resuming)
        for fd in resuming {
            readDeferred[Int(fd)] = false
            guard Int(fd) < handlers.count, let handler = handlers[Int(fd)] else { continue }
            handler.readable(hangup: false)
        }
        resuming.removeAll(keepingCapacity: true)
    }

    private func dispatch(fd: Int32, events: UInt32) {
        let hangup = events & (EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0
        if events & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 {
            guard Int(fd) < handlers.count, let handler = handlers[Int(fd)] else { return }
            handler.readable(hangup: hangup)
        }
        if events & EPOLLOUT.rawValue != 0 {
            // The read callback may have closed and deregistered the socket.
            guard Int(fd) < handlers.count, let handler = handlers[Int(fd)] else { return }
            handler.writable()
        }
    }

    private func runInbox() {
        inbox.withLock { queue in swap(&queue, &running) }
        for item in running { item() }
        running.removeAll(keepingCapacity: true)
    }

    private func runDueTimers() {
        while let timer = timers.popDue(now: now) {
            timer.body()
        }
    }

    /// Flushing can queue further flushes (a flush that closes a connection notifies a room),
    /// so drain until nothing is pending.
    private func flushPending() {
        while !pendingFlush.isEmpty {
            swap(&pendingFlush, &flushing)
            for target in flushing { target.flush() }
            flushing.removeAll(keepingCapacity: true)
        }
    }

    private func waitTimeout() -> Int32 {
        if !pendingFlush.isEmpty || !pendingReads.isEmpty { return 0 }
        guard let deadline = timers.nextDeadline else { return -1 }
        let current = SystemClock.monotonicNanoseconds()
        if deadline <= current { return 0 }
        // Round up so the timer is due when the wait ends, not a millisecond before.
        return Int32(min((deadline - current + 999_999) / 1_000_000, 60_000))
    }
}

/// Reads the signalfd and reports each signal.
private final class SignalHandler: EventHandler {
    let fd: Int32
    let body: (Int32) -> Void

    init(fd: Int32, body: @escaping (Int32) -> Void) {
        self.fd = fd
        self.body = body
    }

    func readable(hangup: Bool) {
        while let signal = SignalFD.read(fd) { body(signal) }
    }

    func writable() {}
}
