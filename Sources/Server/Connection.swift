import Bytes
import Deflate
import HTTP
import Logging
import Posix
import TLS
import WebSocket

/// One client socket from accept to close: the transport (descriptor, TLS, write queue,
/// flushing), the protocol it speaks (HTTP requests, then a WebSocket) and its lifecycle.
///
/// What an endpoint keeps for the connection lives in the endpoint's session (`Session`), not
/// here; what the connection needs from the server comes through `ConnectionOwner`, so a test can
/// run one over a socketpair with a clock of its own. Closing is `ConnectionLifecycle`'s: every
/// decision goes through it and comes back as an action that `perform` carries out.
///
/// Confined to the owner's event loop thread.
final class Connection: EventHandler, Flushable {
    let fd: Int32
    unowned let owner: any ConnectionOwner
    let loop: EventLoop
    let metrics: Metrics
    /// The owner's limits, copied once: they do not change, and the read path consults them
    /// on every event.
    let limits: ConnectionLimits
    var lifecycle: ConnectionLifecycle
    private let tls: TLSSession?
    /// Requests are parsed until the upgrade; nil afterwards.
    var httpParser: HTTPRequestParser?
    /// Whether the current request's answer comes later (a publish waiting for the disk).
    var isAwaitingResponse = false
    /// Input that arrived while an answer was pending, parsed once it is sent.
    var heldInput: [UInt8] = []
    /// The WebSocket protocol, from the upgrade on.
    var webSocket: WebSocketConnection?
    /// The endpoint's state for this connection, from the upgrade until the close is decided.
    var session: Session?
    /// The negotiated permessage-deflate streams, if any.
    var compression: ConnectionCompression?
    /// The peer's address as the per-address limits count it (`ClientAddress.limitKey`: an
    /// IPv6 peer's /64 network).
    let address: String
    private var writeQueue = WriteQueue()
    /// Whether the last write attempt left bytes the socket refused: only then can what waits
    /// mean a slow reader (a burst queued within one pass is not one).
    private var socketFull = false
    /// The reply to the latest ping, held back while the socket refuses bytes: RFC 6455 §5.5.3
    /// lets a server answer only the latest, so a peer that pings without reading costs one
    /// pong, not a queue of them. While the socket takes bytes every ping gets its pong.
    private var pendingPong: ByteChunk?
    /// Whether reading stopped because the peer pings without reading: its socket refused our
    /// bytes and a pong waits. Until the socket takes bytes again its pings stay in the kernel
    /// and cost nothing (a flood of them took 40% of the loop's core, answered or not); the
    /// idle timeout of a stalled socket closes it all the same.
    private var readingPaused = false
    /// Whether the body of the request being read waits for the owner's word
    /// (`BodyAdmission.hold`): until then the socket is not read.
    var bodyOnHold = false
    /// Bytes that may still be read after the connection was failed for the peer's fault
    /// (`fail`, or a protocol error), for the peer's close reply; nil until then. Once spent
    /// the socket is not read again (RFC 6455 §7.1.7: a failed connection's data is not
    /// processed): a flooder's bytes stay in the kernel and its sends stall, where reading
    /// them until its close reply took a quarter of the loop's core at 1.8 GB/s. The peer's
    /// hang-up or the close timeout ends the connection.
    private var readAllowance: Int?
    /// Bytes read while a compressed message was being inflated in steps
    /// (`WebSocketConnection.isInflating`): they wait for the inflation to finish.
    private var heldFrames: [UInt8] = []
    /// What is left of this readiness event's `ConnectionLimits.inflationBudgetBytes`.
    private var inflationBudget = 0
    /// `readAllowance` once a connection is failed: a close reply and the frames the peer
    /// had in flight fit many times over.
    static let failedReadAllowance = 64 * 1024
    /// Pings in the second that began at `pingWindowStart` (loop time), against
    /// `ConnectionLimits.maxPingsPerSecond`.
    private var pingsInWindow = 0
    private var pingWindowStart: UInt64 = 0
    /// Messages (and HTTP requests) handled since the current readiness event began, against
    /// `ConnectionLimits.readBudgetMessages`.
    var messagesRead = 0
    /// Plaintext frames for a TLS connection, encrypted together at the flush: a burst of room
    /// messages becomes one stream of records sealed straight into the chunk the socket sends
    /// from (TLSSession.send(_:byteCount:scratch:)), not one record per message.
    private var tlsPlaintext: [ByteChunk] = []
    private var tlsPlaintextBytes = 0
    private var flushScheduled = false
    /// Messages queued for the peer and not yet written, and when the oldest of them arrived
    /// (loop time): the flush that empties the queue records them in the delivery latency
    /// histogram at once, so a message costs a comparison and an increment, never a clock read.
    private var unwrittenMessages = 0
    private var oldestUnwrittenArrival: UInt64 = 0
    private var events: [WebSocketEvent] = []
    /// The connection's place in the owner's list, for O(1) removal.
    var slot = 0
    /// Refused at accept (over a connection limit): it only says so and closes.
    var isRefusal = false

    init(fd: Int32, owner: any ConnectionOwner, tls: TLSSession?, address: String = "unknown") {
        self.fd = fd
        self.address = address
        self.owner = owner
        self.loop = owner.loop
        self.metrics = owner.metrics
        let limits = owner.limits
        self.limits = limits
        self.tls = tls
        self.httpParser = HTTPRequestParser(maxHeadBytes: limits.maxHeadBytes, maxBodyBytes: limits.maxBodyBytes)
        self.lifecycle = ConnectionLifecycle(now: owner.now, timeouts: limits.timeouts, maxRequests: limits.maxRequestsPerConnection)
    }

    // MARK: Reading

    /// Reads until the socket has nothing more, or until this event's budget (bytes and
    /// messages, `ConnectionLimits`) is spent: then the loop comes back after the other
    /// sockets and the timers (`EventLoop.readLater`), so one busy peer cannot starve them.
    /// A peer that pings without reading is not read at all until it reads (`readingPaused`),
    /// nor a request's body that waits for the owner's word (`bodyOnHold`).
    func readable(hangup: Bool) {
        let buffer = loop.readBuffer
        var budget = limits.readBudgetBytes
        messagesRead = 0
        inflationBudget = limits.inflationBudgetBytes
        if isInflating {
            resumeInflating()
            if isInflating { return loop.readLater(fd) }
        }
        // Bytes held for a peer whose input no longer matters (the connection is closing).
        heldFrames = []
        while !lifecycle.isClosed {
            if socketFull, pendingPong != nil, !hangup {
                readingPaused = true
                return
            }
            if let allowance = readAllowance, allowance <= 0 {
                if hangup { perform(lifecycle.ended()) }
                return
            }
            if bodyOnHold { return }
            guard budget > 0, messagesRead < limits.readBudgetMessages else {
                loop.readLater(fd)
                return
            }
            let count: Int
            let window = UnsafeMutableRawBufferPointer(
                rebasing: buffer[0..<min(buffer.count, budget, readAllowance ?? Int.max)])
            do {
                guard let read = try Socket.read(fd, into: window) else { return }
                count = read
            } catch {
                owner.logger.debug("read failed", metadata: ["error": "\(error)"])
                perform(lifecycle.ended())
                return
            }
            if count == 0 {
                perform(lifecycle.ended())
                return
            }
            budget -= count
            readAllowance? -= count
            lifecycle.heard(at: owner.now)
            metrics.bytesIn += count
            receive(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            if isInflating { return loop.readLater(fd) }
            // A read that did not fill its window emptied the socket, and edge triggering
            // reports whatever arrives after it (more bytes, the peer's end of stream) as a new
            // event: the read that would only say "nothing more" is saved, one per request
            // when requests come one at a time. After a hangup, reading goes on to the end.
            if count < window.count && !hangup { return }
        }
    }

    /// Bytes from the socket. While closing, only a WebSocket waiting for the peer's close reply
    /// still reads them; anything else is read and dropped until the peer's end of stream.
    private func receive(_ bytes: UnsafeRawBufferPointer) {
        guard inputMatters else { return }
        guard let tls else { return process(bytes) }
        let plaintext: [UInt8]
        do {
            plaintext = try tls.receive(bytes)
        } catch {
            owner.logger.debug("TLS error, closing", metadata: ["error": "\(error)"])
            scheduleFlush()
            perform(lifecycle.finish(now: owner.now))
            return
        }
        if tls.hasUrgentOutput { scheduleFlush() }
        plaintext.withUnsafeBytes { process($0) }
    }

    private func process(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        if webSocket != nil {
            processWebSocket(bytes)
        } else if httpParser != nil {
            processHTTP(bytes)
        }
    }

    func processWebSocket(_ bytes: UnsafeRawBufferPointer) {
        // The events array (kept for its capacity) and the budget are worked on as locals and
        // put back, as `withWriteQueue` does with the write queue. (Moving the parser out too
        // would copy it twice per read, which costs what its checks do.)
        var events: [WebSocketEvent] = []
        swap(&events, &self.events)
        var budget = inflationBudget
        let consumed = webSocket!.receive(bytes, into: &events, inflationBudget: &budget)
        inflationBudget = budget
        // A new array rather than an append in place, which may release the old buffer: code
        // the optimizer cannot follow either (see `withWriteQueue`). Bytes are seldom held.
        if consumed < bytes.count { heldFrames = heldFrames + bytes[consumed...] }
        defer {
            events.removeAll(keepingCapacity: events.capacity <= 64)
            swap(&events, &self.events)
        }
        for event in events {
            if case .closeConnection(let code, _) = event {
                if code != .normalClosure && code != .goingAway {
                    metrics.countClose(code)
                    limitReading()
                }
                perform(lifecycle.finish(now: owner.now))
                break
            }
            // After a close is decided, nothing but the closing handshake matters.
            guard lifecycle.isOpen else { continue }
            handle(event)
        }
    }

    /// Whether a compressed message is being inflated in steps (bytes may wait behind it in
    /// `heldFrames`) and the peer's input still matters.
    private var isInflating: Bool { webSocket?.isInflating == true && inputMatters }

    /// While closing, only a WebSocket waiting for the peer's close reply still reads input.
    private var inputMatters: Bool { lifecycle.acceptsOutput || webSocket?.isAwaitingCloseReply == true }

    /// Goes on with the message being inflated, then the bytes held behind it, within this
    /// event's inflation budget.
    private func resumeInflating() {
        let held = heldFrames
        heldFrames = []
        held.withUnsafeBytes { processWebSocket($0) }
    }

    private func handle(_ event: WebSocketEvent) {
        switch event {
        case .text(let payload, let compressed):
            deliver(.text, payload, compressed)
        case .binary(let payload, let compressed):
            deliver(.binary, payload, compressed)
        case .pong, .closeConnection:
            break
        case .write(let chunk):
            guard chunk.bytes.first.map({ $0 & 0x0F == Opcode.pong.rawValue }) == true else {
                enqueue(chunk)
                return
            }
            guard admitPing() else {
                // No closing handshake: reading the flood until the peer's close reply
                // cost as much as the flood. The close frame goes if the socket takes it.
                metrics.countClose(.policyViolation)
                close(code: .policyViolation, reason: "too many pings")
                flush()
                closeNow()
                return
            }
            // Every ping is answered in turn while the socket takes our bytes (Autobahn 2.10
            // expects as many pongs as pings); once it refuses them only the latest reply is kept.
            if socketFull {
                pendingPong = chunk
                scheduleFlush()
            } else {
                enqueue(chunk)
            }
        }
    }

    /// Counts a ping in the current one-second window; false once the peer is over its rate.
    private func admitPing() -> Bool {
        let now = owner.now
        if now &- pingWindowStart >= 1_000_000_000 {
            pingWindowStart = now
            pingsInWindow = 0
        }
        pingsInWindow += 1
        return pingsInWindow <= limits.maxPingsPerSecond
    }

    /// Hands a message to the session in the form it takes: relays get it ready to pass on,
    /// with the sender's compression; readers get the payload alone.
    private func deliver(_ opcode: Opcode, _ payload: [UInt8], _ compressed: [UInt8]?) {
        messagesRead += 1
        switch session {
        case .relay(let relay)?:
            metrics.messagesReceived[relay.kind] += 1
            relay.relay(OutgoingMessage(relaying: opcode, payload: payload, compressed: compressed))
        case .reader(let reader)?:
            metrics.messagesReceived[reader.kind] += 1
            reader.received(opcode, payload: payload)
        case .stream?, nil:
            break
        }
    }

    // MARK: Writing

    /// Queues a frame for the peer; it goes out at the end of this loop iteration.
    func send(_ chunk: ByteChunk) {
        guard lifecycle.acceptsOutput else { return }
        enqueue(chunk)
    }

    /// Frames `message` for this connection's compression and queues it.
    func send(_ message: inout OutgoingMessage) {
        send(message.frame(for: compression))
    }

    /// Queues a message that arrived at `arrival` (loop time) from a client or the publish API,
    /// so its wait until the write that carries it is measured.
    func deliver(_ message: inout OutgoingMessage, arrivedAt arrival: UInt64) {
        if unwrittenMessages == 0 { oldestUnwrittenArrival = arrival }
        unwrittenMessages += 1
        send(message.frame(for: compression))
    }

    /// Queues bytes, also while closing: the protocol's own frames (pings, close frames) and
    /// HTTP responses. Every byte counts against the outbound limit.
    func enqueue(_ chunk: ByteChunk) {
        queue(chunk)
        scheduleFlush()
        checkOutbound()
    }

    /// Appends to the outbound bytes; a pending pong goes first when the socket takes bytes,
    /// so a ping answered within a fragmented message is answered before the message.
    private func queue(_ chunk: ByteChunk) {
        if let pong = pendingPong, !socketFull {
            pendingPong = nil
            queue(pong)
        }
        if tls != nil {
            tlsPlaintext.append(chunk)
            tlsPlaintextBytes += chunk.count
        } else {
            withWriteQueue { $0.append(chunk) }
        }
    }

    /// Closes a slow consumer: a peer whose socket refused bytes at the last write attempt and
    /// for whom more than the outbound limit now waits. A reader that keeps up has an empty
    /// socket backlog, so a large burst queued within one pass never closes it.
    private func checkOutbound() {
        guard socketFull else { return }
        let queued = writeQueue.queuedBytes + tlsPlaintextBytes
        let limit = lifecycle.isHTTP ? max(limits.outboundBytes, limits.httpOutboundBytes) : limits.outboundBytes
        guard queued > limit, lifecycle.acceptsOutput else { return }
        metrics.slowConsumers += 1
        owner.logger.debug("closing a slow consumer", metadata: ["queued": "\(queued)"])
        close(code: .policyViolation, reason: "slow consumer: outbound queue full")
    }

    func scheduleFlush() {
        guard !flushScheduled else { return }
        flushScheduled = true
        loop.flushLater(self)
    }

    func flush() {
        flushScheduled = false
        guard lifecycle.writes else { return }
        if let pong = pendingPong, !socketFull {
            pendingPong = nil
            queue(pong)
        }
        if let tls {
            if !tlsPlaintext.isEmpty {
                do {
                    try encryptPending(tls)
                } catch {
                    owner.logger.debug("TLS error on send", metadata: ["error": "\(error)"])
                    perform(lifecycle.ended())
                    return
                }
            }
            if let output = tls.takeOutput() { withWriteQueue { $0.append(output) } }
        }
        let before = writeQueue.queuedBytes
        let drained: Bool
        do {
            drained = try withWriteQueue { queue throws(PosixError) in try queue.flush(to: fd, vectors: loop.vectors) }
        } catch {
            owner.logger.debug("write failed", metadata: ["error": "\(error)"])
            perform(lifecycle.ended())
            return
        }
        metrics.bytesOut += before - writeQueue.queuedBytes
        guard drained else {
            socketFull = true
            lifecycle.refused(now: owner.now)
            checkOutbound()
            return
        }
        socketFull = false
        lifecycle.drained()
        if readingPaused {
            readingPaused = false
            loop.readLater(fd)
        }
        if pendingPong != nil { scheduleFlush() }
        if unwrittenMessages > 0 {
            let waited = owner.now - min(oldestUnwrittenArrival, owner.now)
            metrics.deliveryLatency.record(Double(waited) / 1e9, times: UInt64(unwrittenMessages))
            unwrittenMessages = 0
        }
        perform(lifecycle.flushed())
    }

    /// Encrypts the frames queued since the last flush as one stream of records.
    private func encryptPending(_ tls: TLSSession) throws {
        defer {
            tlsPlaintext.removeAll(keepingCapacity: tlsPlaintext.capacity <= 16)
            tlsPlaintextBytes = 0
        }
        try tls.send(tlsPlaintext, byteCount: tlsPlaintextBytes, scratch: owner.tlsScratch)
    }

    /// Runs `body` on the write queue moved out of `writeQueue`, then puts it back. Calls into
    /// the Posix module are unknown code to this one's optimizer: an access to a stored
    /// property that spans one makes every access to that property pay a run-time
    /// exclusivity check, and the queue is used several times per message (docs/architecture.md,
    /// "Exclusivity checks on the message path").
    private func withWriteQueue<Result, Failure: Error>(
        _ body: (inout WriteQueue) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        var queue = WriteQueue()
        swap(&queue, &writeQueue)
        defer { swap(&queue, &writeQueue) }
        return try body(&queue)
    }

    func writable() {
        if !writeQueue.isEmpty || (tls?.hasUrgentOutput ?? false) { flush() }
    }

    // MARK: Closing and time

    /// Starts a server-side close: an open WebSocket gets a close frame with `code`, a connection
    /// still in HTTP is dropped.
    func close(code: CloseCode, reason: String) {
        perform(lifecycle.close(code, reason: reason, now: owner.now))
    }

    /// Fails the connection for a peer that broke a limit (a flood, malformed requests): a close
    /// frame with `code`, and at most `failedReadAllowance` more bytes read, for its close reply.
    func fail(code: CloseCode, reason: String) {
        limitReading()
        close(code: code, reason: reason)
    }

    private func limitReading() {
        readAllowance = min(readAllowance ?? Int.max, Self.failedReadAllowance)
    }

    /// Closes the socket now, without any more writes (the end of a shutdown).
    func closeNow() {
        perform(lifecycle.ended())
    }

    /// The owner's periodic tick: handshake and idle timeouts, pings, close timeouts.
    func tick(now: UInt64) {
        if answerTimedOutBody(now: now) { return }
        perform(lifecycle.tick(now: now))
    }

    /// Carries out what the lifecycle decided.
    func perform(_ action: ConnectionLifecycle.Action) {
        switch action {
        case .none:
            break
        case .sendPing:
            enqueue(FrameEncoder.frame(.ping, payload: [UInt8]()))
        case .sendClose(let code, let reason):
            endSession()
            if let frame = webSocket?.close(code: code, reason: reason) { enqueue(frame) }
            scheduleFlush()
        case .finishWriting:
            endSession()
            scheduleFlush()
        case .shutDownWrite:
            if let tls {
                tls.close()
                if let output = tls.takeOutput() {
                    _ = try? withWriteQueue { queue throws(PosixError) in
                        queue.append(output)
                        return try queue.flush(to: fd, vectors: loop.vectors)
                    }
                }
            }
            Socket.shutdownWrite(fd)
        case .closeSocket:
            endSession()
            withWriteQueue { $0.removeAll() }
            pendingPong = nil
            tlsPlaintext = []
            tlsPlaintextBytes = 0
            loop.deregister(fd)
            Socket.close(fd)
            owner.closed(self)
        }
    }

    /// Tells the session the connection is over, once, as soon as the close is decided (before
    /// the socket is gone), so rooms and presence change at once.
    private func endSession() {
        guard let session else { return }
        self.session = nil
        session.base.closed()
    }
}
