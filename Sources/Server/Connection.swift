import Bytes
import Deflate
import HTTP
import Logging
import Posix
import TLS
import WebSocket

/// One client socket, from accept to close: reads, TLS, HTTP, the WebSocket protocol, and
/// the outbound queue.
///
/// Confined to the server's event loop thread.
final class Connection: EventHandler, Flushable {
    enum Phase {
        /// Reading HTTP requests (before an upgrade, or plain keep-alive requests).
        case http
        /// An open WebSocket.
        case webSocket
        /// A close was decided: we write what is queued, shut our side, and wait a little for
        /// the peer's end of stream so the kernel never turns unread data into a reset that
        /// would destroy our close frame.
        case closing
        case closed
    }

    let fd: Int32
    unowned let server: Server
    var phase = Phase.http
    var tls: TLSSession?
    var httpParser: HTTPRequestParser?
    var webSocket: WebSocketConnection?
    var endpoint: Endpoint?
    /// The negotiated permessage-deflate parameters, if any.
    var deflate: DeflateParameters?
    /// This connection's own compression stream, only when it keeps context between messages
    /// (then its frames cannot be shared with anyone).
    var ownDeflater: MessageDeflater?
    var writeQueue = WriteQueue()
    /// Plaintext frames for a TLS connection, encrypted together at the flush: a burst of room
    /// messages becomes one TLS record and one `SSL_write` instead of one per message.
    private var tlsPlaintext: [ByteChunk] = []
    private var tlsPlaintextBytes = 0
    /// The connection's place in `Server.connections`, for O(1) removal.
    var slot = 0

    /// When the peer last sent anything (monotonic ns); silence is measured from here.
    var lastHeard: UInt64
    var lastPing: UInt64 = 0
    /// In the HTTP phase (TLS handshake included): when the request must be complete. Counted
    /// from accept, and again after each keep-alive response, not from the last byte heard, so a
    /// client trickling a byte at a time cannot hold the connection open.
    var handshakeDeadline: UInt64 = 0
    /// For `.closing`: when to stop waiting for the peer and close anyway.
    var closeDeadline: UInt64 = 0
    private var flushScheduled = false
    private var closeWhenFlushed = false
    private var events: [WebSocketEvent] = []

    /// Per-endpoint state: the plain room this connection is in and how it is shown there.
    var roomName: String?
    var displayName = ""
    var wantsNotices = true

    init(fd: Int32, server: Server, tls: TLSSession?) {
        self.fd = fd
        self.server = server
        self.tls = tls
        self.httpParser = HTTPRequestParser(maxHeadBytes: 8192)
        self.lastHeard = server.loop.now
        self.handshakeDeadline = server.loop.now + Server.nanoseconds(server.configuration.handshakeTimeout)
    }

    var loop: EventLoop { server.loop }

    // MARK: Reading

    func readable(hangup: Bool) {
        let buffer = loop.readBuffer
        while phase != .closed {
            let count: Int
            do {
                guard let read = try Socket.read(fd, into: buffer) else { return }
                count = read
            } catch {
                server.logger.debug("read failed", metadata: ["error": "\(error)"])
                abort()
                return
            }
            if count == 0 {
                abort()
                return
            }
            lastHeard = loop.now
            server.metrics.bytesIn += count
            let bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
            if phase == .closing { continue }
            if let tls {
                let plaintext: [UInt8]
                do {
                    plaintext = try tls.receive(bytes)
                } catch {
                    server.logger.debug("TLS error, closing", metadata: ["error": "\(error)"])
                    scheduleFlush()
                    abortAfterFlush()
                    return
                }
                if tls.hasOutput { scheduleFlush() }
                plaintext.withUnsafeBytes { process($0) }
            } else {
                process(bytes)
            }
        }
    }

    private func process(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        switch phase {
        case .http: processHTTP(bytes)
        case .webSocket: processWebSocket(bytes)
        case .closing, .closed: return
        }
    }

    func processWebSocket(_ bytes: UnsafeRawBufferPointer) {
        guard webSocket != nil else { return }
        webSocket!.receive(bytes, into: &events)
        guard !events.isEmpty else { return }
        for event in events {
            guard phase == .webSocket else { break }
            handle(event)
        }
        events.removeAll(keepingCapacity: events.capacity <= 64)
    }

    private func handle(_ event: WebSocketEvent) {
        switch event {
        case .text(let payload, let compressed):
            server.metrics.messagesIn += 1
            endpoint?.received(self, opcode: .text, payload: payload, compressed: compressed)
        case .binary(let payload, let compressed):
            server.metrics.messagesIn += 1
            endpoint?.received(self, opcode: .binary, payload: payload, compressed: compressed)
        case .pong:
            break
        case .write(let chunk):
            enqueue(chunk)
        case .closeConnection(let code, _):
            if code != .normalClosure && code != .goingAway {
                server.metrics.countClose(code)
            }
            abortAfterFlush()
        }
    }

    // MARK: Writing

    /// Queues bytes for the peer; they go out at the end of this loop iteration.
    func send(_ chunk: ByteChunk) {
        guard phase == .webSocket || phase == .http else { return }
        enqueue(chunk)
        let queued = writeQueue.queuedBytes + tlsPlaintextBytes
        if queued > server.outboundLimit {
            server.metrics.slowConsumers += 1
            server.logger.debug("closing a slow consumer", metadata: ["queued": "\(queued)"])
            close(code: .policyViolation, reason: "slow consumer: outbound queue full")
        }
    }

    func enqueue(_ chunk: ByteChunk) {
        if tls != nil {
            tlsPlaintext.append(chunk)
            tlsPlaintextBytes += chunk.count
        } else {
            writeQueue.append(chunk)
        }
        scheduleFlush()
    }

    /// Encrypts the frames queued since the last flush as one stream of records, sealed
    /// straight into the chunk the socket sends from (TLSSession.send(_:byteCount:scratch:)).
    private func encryptPending(_ tls: TLSSession) throws {
        defer {
            tlsPlaintext.removeAll(keepingCapacity: tlsPlaintext.capacity <= 16)
            tlsPlaintextBytes = 0
        }
        try tls.send(tlsPlaintext, byteCount: tlsPlaintextBytes, scratch: server.tlsScratch)
    }

    func send(_ response: HTTPResponse, keepAlive: Bool) {
        enqueue(ByteChunk(response.serialize(keepAlive: keepAlive)))
        if keepAlive {
            handshakeDeadline = loop.now + Server.nanoseconds(server.configuration.handshakeTimeout)
        } else {
            abortAfterFlush()
        }
    }

    func scheduleFlush() {
        guard !flushScheduled else { return }
        flushScheduled = true
        loop.flushLater(self)
    }

    func flush() {
        flushScheduled = false
        guard phase != .closed else { return }
        if let tls {
            if !tlsPlaintext.isEmpty {
                do {
                    try encryptPending(tls)
                } catch {
                    server.logger.debug("TLS error on send", metadata: ["error": "\(error)"])
                    abort()
                    return
                }
            }
            if let output = tls.takeOutput() { writeQueue.append(output) }
        }
        let before = writeQueue.queuedBytes
        let drained: Bool
        do {
            drained = try writeQueue.flush(to: fd, vectors: loop.vectors)
        } catch {
            server.logger.debug("write failed", metadata: ["error": "\(error)"])
            abort()
            return
        }
        server.metrics.bytesOut += before - writeQueue.queuedBytes
        if drained && closeWhenFlushed { beginClosing() }
    }

    func writable() {
        if !writeQueue.isEmpty || (tls?.hasOutput ?? false) { flush() }
    }

    // MARK: Closing

    /// Starts a server-side close of an open WebSocket (shutdown, slow consumer, idle).
    func close(code: CloseCode, reason: String) {
        guard phase == .webSocket else {
            if phase == .http { abort() }
            return
        }
        leaveEndpoint()
        if let frame = webSocket?.close(code: code, reason: reason) {
            enqueue(frame)
        }
        closeWhenFlushed = true
        // A peer that never answers (or never reads) is dropped after the close timeout.
        phase = .closing
        closeDeadline = loop.now + Server.closeTimeout
        scheduleFlush()
    }

    /// Everything is written: shut our side and wait briefly for the peer's end of stream.
    private func beginClosing() {
        closeWhenFlushed = false
        if let tls {
            tls.close()
            if let output = tls.takeOutput() {
                writeQueue.append(output)
                _ = try? writeQueue.flush(to: fd, vectors: loop.vectors)
            }
        }
        Socket.shutdownWrite(fd)
        if phase != .closing {
            phase = .closing
            closeDeadline = loop.now + Server.closeTimeout
        }
    }

    /// Closes once the queued bytes (an error response) are written.
    func abortAfterFlush() {
        leaveEndpoint()
        closeWhenFlushed = true
        phase = .closing
        closeDeadline = loop.now + Server.closeTimeout
        scheduleFlush()
    }

    /// Closes the socket now, without any more writes.
    func abort() {
        guard phase != .closed else { return }
        leaveEndpoint()
        phase = .closed
        writeQueue.removeAll()
        tlsPlaintext = []
        tlsPlaintextBytes = 0
        loop.deregister(fd)
        Socket.close(fd)
        server.remove(self)
    }

    private func leaveEndpoint() {
        guard let endpoint else { return }
        self.endpoint = nil
        server.webSocketCount -= 1
        endpoint.closed(self)
    }

    // MARK: Timers

    /// Called by the server's periodic tick: handshake and idle timeouts, pings, close timeouts.
    func tick(now: UInt64) {
        let config = server.configuration
        switch phase {
        case .http:
            if now > handshakeDeadline { abort() }
        case .webSocket:
            let silence = now - lastHeard
            if silence > Server.nanoseconds(config.idleTimeout) {
                close(code: .goingAway, reason: "idle timeout")
            } else if silence >= Server.nanoseconds(config.pingInterval)
                        && now - lastPing >= Server.nanoseconds(config.pingInterval) {
                lastPing = now
                enqueue(FrameEncoder.frame(.ping, payload: [UInt8]()))
            }
        case .closing:
            if now > closeDeadline { abort() }
        case .closed:
            break
        }
    }
}
