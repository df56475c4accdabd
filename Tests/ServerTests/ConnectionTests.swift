import Bytes
import Deflate
import Glibc
import HTTP
import Logging
import Posix
import Testing
import WebSocket
@testable import Server

/// Stands in for the server: a real event loop (never run: the test calls `readable` and `flush`
/// itself), a clock the test moves, and every upgrade answered with `/echo`. `/later` is
/// answered when the test calls `answerLater`, `/stream` starts a streamed response.
private final class TestOwner: ConnectionOwner {
    let loop: EventLoop
    var now: UInt64 = 1_000_000_000
    let limits = ConnectionLimits(
        timeouts: .init(handshake: 10_000_000_000, idle: 60_000_000_000, ping: 25_000_000_000, close: 2_000_000_000),
        outboundBytes: 1 << 20, maxMessageSize: 1 << 20)
    let metrics = Metrics()
    let logger = Logger(label: "test")
    let tlsScratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 4 * 16_384, alignment: 16)
    var requests: [HTTPRequestHead] = []
    var bodies: [[UInt8]] = []
    var waiting: Connection?
    var closedConnections = 0
    /// Bodies wait for `Connection.releaseBody` (as an upload waits for the chat loop's check).
    var holdsBodies = false

    init() throws {
        loop = try EventLoop()
    }

    deinit {
        tlsScratch.deallocate()
    }

    func respond(to head: HTTPRequestHead, body: [UInt8], on connection: Connection) {
        requests.append(head)
        bodies.append(body)
        if head.path == "/later" {
            connection.deferResponse()
            waiting = connection
            return
        }
        if head.path == "/stream" {
            connection.stream(HTTPResponse(status: .ok, headers: ["Transfer-Encoding": "chunked"]), to: Silent())
            return
        }
        switch WebSocketUpgrade.evaluate(head, allowedOrigins: []) {
        case .accept(let response):
            connection.upgrade(response, to: EchoEndpoint(), head: head, compression: nil)
        case .refuse:
            connection.send(.json(.ok, body: #"{"status":"ok"}"#), keepAlive: head.keepAlive)
        }
    }

    func admitBody(of head: HTTPRequestHead, on connection: Connection) -> BodyAdmission {
        holdsBodies ? .hold(maxBytes: limits.maxBodyBytes, deadline: nil) : .read(maxBytes: limits.maxBodyBytes, deadline: nil)
    }

    func closed(_ connection: Connection) { closedConnections += 1 }

    func answerLater() {
        waiting?.send(.json(.ok, body: #"{"later":true}"#), keepAlive: true)
        waiting = nil
    }

    /// A stream session that writes nothing of its own.
    final class Silent: EndpointSession {
        var kind: EndpointKind { .stream }
        func opened() {}
        func closed() {}
    }
}

/// A connection on one end of a socketpair; the test is the peer on the other end.
private struct Pair {
    let owner: TestOwner
    let connection: Connection
    let peer: Int32

    init() throws {
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0, &fds) == 0)
        owner = try TestOwner()
        connection = Connection(fd: fds[0], owner: owner, tls: nil)
        peer = fds[1]
    }

    /// The peer writes; the connection reads it.
    func send(_ bytes: [UInt8]) {
        #expect(bytes.withUnsafeBytes { write(peer, $0.baseAddress, $0.count) } == bytes.count)
        connection.readable(hangup: false)
    }

    /// The connection writes what it queued; the peer waits for it and reads it (nil: end of
    /// stream). The end of stream can come late: a process another test starts holds a copy
    /// of every descriptor between its fork and its exec, and the socket stays open until then.
    func receive() -> [UInt8]? {
        connection.flush()
        var input = pollfd(fd: peer, events: Int16(POLLIN), revents: 0)
        _ = poll(&input, 1, 10_000)
        return read()
    }

    /// What the peer can read at once ([] when nothing was written).
    func receiveWithoutWaiting() -> [UInt8]? {
        connection.flush()
        return read()
    }

    private func read() -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(peer, $0.baseAddress, $0.count) }
        if count == 0 { return nil }
        return count > 0 ? Array(buffer[0..<count]) : []
    }

    func upgrade() {
        send(Array(("GET /echo HTTP/1.1\r\nHost: test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").utf8))
        let response = String(decoding: receive() ?? [], as: UTF8.self)
        #expect(response.hasPrefix("HTTP/1.1 101"))
        #expect(connection.lifecycle.isOpen)
    }

    func close() {
        Glibc.close(peer)
        if !connection.lifecycle.isClosed { connection.closeNow() }
    }
}

/// A client frame, masked with a zero key (masking is required; the key's value is not).
private func clientFrame(_ opcode: UInt8, _ payload: [UInt8]) -> [UInt8] {
    [0x80 | opcode, 0x80 | UInt8(payload.count), 0, 0, 0, 0] + payload
}

@Test func aKeepAliveRequestIsAnsweredAndTheConnectionDroppedAtTheHandshakeDeadline() throws {
    let pair = try Pair()
    defer { pair.close() }
    pair.send(Array("GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n".utf8))
    #expect(pair.owner.requests.map(\.path) == ["/healthz"])
    #expect(String(decoding: pair.receive() ?? [], as: UTF8.self).hasPrefix("HTTP/1.1 200"))
    pair.connection.tick(now: pair.owner.now + 10_000_000_000)
    #expect(!pair.connection.lifecycle.isClosed)
    pair.connection.tick(now: pair.owner.now + 10_000_000_001)
    #expect(pair.connection.lifecycle.isClosed)
    #expect(pair.owner.closedConnections == 1)
    #expect(pair.receive() == nil)
}

@Test func anUpgradedConnectionEchoesAndAnswersPings() throws {
    let pair = try Pair()
    defer { pair.close() }
    pair.upgrade()
    pair.send(clientFrame(0x1, Array("hello".utf8)) + clientFrame(0x9, [7]))
    #expect(pair.receive() == [0x81, 5] + Array("hello".utf8) + [0x8A, 1, 7])
    #expect(pair.owner.metrics.messagesReceived[.echo] == 1)
}

@Test func aServerCloseCompletesWhenThePeersCloseReplyArrives() throws {
    let pair = try Pair()
    defer { pair.close() }
    pair.upgrade()
    pair.connection.close(code: .goingAway, reason: "bye")
    #expect(pair.connection.session == nil, "the session ends as soon as the close is decided")
    #expect(pair.receive() == [0x88, 5, 0x03, 0xE9] + Array("bye".utf8))
    #expect(pair.receive() == nil, "our side is shut once the close frame is written")
    // Data after our close is dropped; the close reply ends the connection at once.
    pair.send(clientFrame(0x1, Array("late".utf8)) + clientFrame(0x8, [0x03, 0xE9]))
    #expect(pair.connection.lifecycle.isClosed)
    #expect(pair.owner.closedConnections == 1)
    #expect(pair.owner.metrics.messagesReceived[.echo] == 0)
}

@Test func aPeerCloseIsAnsweredAndTheSocketClosedAtTheEndOfStream() throws {
    let pair = try Pair()
    defer { pair.close() }
    pair.upgrade()
    pair.send(clientFrame(0x8, [0x03, 0xE8]))
    #expect(pair.connection.session == nil, "the session ends as soon as the close is decided")
    #expect(pair.receive() == [0x88, 2, 0x03, 0xE8])
    #expect(pair.receive() == nil)
    #expect(!pair.connection.lifecycle.isClosed, "waits for the peer's end of stream")
    shutdown(pair.peer, Int32(SHUT_WR))
    pair.connection.readable(hangup: true)
    #expect(pair.connection.lifecycle.isClosed)
}

@Test func aSilentPeerIsPingedThenClosedAsIdleThenDroppedAfterTheCloseTimeout() throws {
    let pair = try Pair()
    defer { pair.close() }
    pair.upgrade()
    let start = pair.owner.now
    pair.connection.tick(now: start + 25_000_000_000)
    #expect(pair.receive() == [0x89, 0])
    pair.connection.tick(now: start + 60_000_000_001)
    #expect(pair.receive() == [0x88, 14, 0x03, 0xE9] + Array("idle timeout".utf8))
    pair.connection.tick(now: start + 62_000_000_001)
    #expect(!pair.connection.lifecycle.isClosed)
    pair.connection.tick(now: start + 62_000_000_002)
    #expect(pair.connection.lifecycle.isClosed)
}

@Test func aRequestBodyReachesTheOwner() throws {
    let pair = try Pair()
    defer { pair.close() }
    pair.send(Array("POST /api HTTP/1.1\r\nHost: test\r\nContent-Length: 7\r\n\r\n{\"a\":1}".utf8))
    #expect(pair.owner.bodies == [Array("{\"a\":1}".utf8)])
    #expect(String(decoding: pair.receive() ?? [], as: UTF8.self).hasPrefix("HTTP/1.1 200"))
}

@Test func aBodyPastTheLimitIsAnswered413AndTheConnectionCloses() throws {
    let pair = try Pair()
    defer { pair.close() }
    pair.send(Array("POST /api HTTP/1.1\r\nHost: test\r\nContent-Length: 70000\r\n\r\n".utf8))
    #expect(pair.owner.requests.isEmpty)
    let response = String(decoding: pair.receive() ?? [], as: UTF8.self)
    #expect(response.hasPrefix("HTTP/1.1 413"))
    #expect(response.contains("Connection: close"))
}

@Test func aHeldBodyIsNotReadUntilTheOwnerReleasesIt() throws {
    let pair = try Pair()
    defer { pair.close() }
    pair.owner.holdsBodies = true
    pair.send(Array("POST /api HTTP/1.1\r\nHost: test\r\nContent-Length: 8\r\n\r\nabcd".utf8))
    let before = pair.owner.metrics.bytesIn
    pair.send(Array("efgh".utf8))
    #expect(pair.owner.metrics.bytesIn == before, "the rest of the body stays in the socket")
    #expect(unread(pair.connection.fd))
    #expect(pair.owner.requests.isEmpty)
    pair.connection.releaseBody()
    pair.connection.readable(hangup: false)
    #expect(pair.owner.bodies == [Array("abcdefgh".utf8)])
    #expect(String(decoding: pair.receive() ?? [], as: UTF8.self).hasPrefix("HTTP/1.1 200"))
    // The next request's body is held again; one that comes whole with its head needs no release.
    pair.send(Array("POST /api HTTP/1.1\r\nHost: test\r\nContent-Length: 2\r\n\r\nok".utf8))
    #expect(pair.owner.bodies.last == Array("ok".utf8))
    pair.send(Array("GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n".utf8))
    #expect(pair.owner.requests.map(\.path) == ["/api", "/api", "/healthz"])
}

/// A held body ended unread: refused by the owner (401), or still held at its deadline (408).
@Test(arguments: [401, 408])
func aHeldBodyEndedUnreadIsAnsweredAndTheRestDroppedUntilTheHangUp(status: Int) throws {
    let pair = try Pair()
    defer { pair.close() }
    pair.owner.holdsBodies = true
    pair.send(Array("POST /api HTTP/1.1\r\nHost: test\r\nContent-Length: 60000\r\n\r\n".utf8))
    pair.send(Array(repeating: 0x61, count: 1000))
    #expect(unread(pair.connection.fd))
    if status == 401 {
        pair.connection.refuseBody(.error(.unauthorized, code: "unauthorized", message: "sign in"))
    } else {
        pair.connection.tick(now: pair.owner.now + 10_000_000_001)
    }
    let response = String(decoding: pair.receive() ?? [], as: UTF8.self)
    #expect(response.hasPrefix("HTTP/1.1 \(status)"))
    #expect(response.contains("Connection: close"))
    pair.connection.readable(hangup: false)
    #expect(!unread(pair.connection.fd), "what the peer sent is read and dropped")
    #expect(pair.owner.requests.isEmpty)
    shutdown(pair.peer, Int32(SHUT_WR))
    pair.connection.readable(hangup: true)
    #expect(pair.connection.lifecycle.isClosed)
}

@Test func requestsBehindADeferredAnswerWaitForIt() throws {
    let pair = try Pair()
    defer { pair.close() }
    pair.send(Array("GET /later HTTP/1.1\r\nHost: test\r\n\r\nGET /next HTTP/1.1\r\nHost: test\r\n\r\n".utf8))
    #expect(pair.owner.requests.map(\.path) == ["/later"], "the second request is held")
    #expect(pair.receiveWithoutWaiting() == [], "nothing is answered yet")
    pair.owner.answerLater()
    #expect(pair.owner.requests.map(\.path) == ["/later", "/next"])
    let answers = String(decoding: pair.receive() ?? [], as: UTF8.self)
    #expect(answers.hasPrefix("HTTP/1.1 200"))
    let later = try #require(answers.firstRange(of: #"{"later":true}"#))
    let next = try #require(answers.firstRange(of: #"{"status":"ok"}"#))
    #expect(later.lowerBound < next.lowerBound)
}

@Test func aStreamOutlivesTheRequestDeadlineAndEndsWhenClosed() throws {
    let pair = try Pair()
    defer { pair.close() }
    pair.send(Array("GET /stream HTTP/1.1\r\nHost: test\r\n\r\n".utf8))
    #expect(String(decoding: pair.receive() ?? [], as: UTF8.self).hasPrefix("HTTP/1.1 200"))
    pair.connection.tick(now: pair.owner.now + 3_600_000_000_000)
    #expect(!pair.connection.lifecycle.isClosed, "a stream has no deadline and gets no pings")
    #expect(pair.receiveWithoutWaiting() == [])
    pair.connection.send(ByteChunk(Array("3\r\nabc\r\n".utf8)))
    #expect(pair.receive() == Array("3\r\nabc\r\n".utf8))
    pair.connection.close(code: .goingAway, reason: "shutdown")
    #expect(pair.connection.session == nil, "the session ends as soon as the close is decided")
    #expect(pair.receive() == nil, "our side is shut once everything is written")
}

@Test func deliveryLatencyRunsFromArrivalToTheWrite() throws {
    let pair = try Pair()
    defer { pair.close() }
    pair.upgrade()
    var message = OutgoingMessage(.text, payload: Array("hi".utf8))
    pair.connection.deliver(&message, arrivedAt: pair.owner.now - 2_000_000)
    pair.connection.deliver(&message, arrivedAt: pair.owner.now)
    #expect(pair.receive()?.count == 8)
    let latency = pair.owner.metrics.deliveryLatency
    #expect(latency.count == 2)
    #expect(latency.sum == 0.004, "both are counted from the oldest arrival, 2 ms before the write")
}

/// Whether bytes wait unread in the connection's socket.
private func unread(_ fd: Int32) -> Bool {
    var byte: UInt8 = 0
    return recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) > 0
}

@Test func aPeerThatPingsWithoutReadingIsNotReadUntilItReads() throws {
    let pair = try Pair()
    defer { pair.close() }
    pair.upgrade()
    var size: Int32 = 4096
    setsockopt(pair.connection.fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    // The peer pings and never reads: pongs fill the connection's socket, then it stops reading.
    var pings = 0
    while !unread(pair.connection.fd) {
        pings += 1
        #expect(pings < 100_000, "the connection kept reading pings that it could not answer")
        if pings >= 100_000 { return }
        pair.owner.now += 20_000_000
        pair.send(clientFrame(0x9, [UInt8(pings % 256)]))
        pair.connection.flush()
    }
    pair.send(clientFrame(0x9, [1]) + clientFrame(0x9, [2]))
    #expect(unread(pair.connection.fd))
    // Once the peer reads, the socket takes bytes again, reading resumes and the latest ping is answered.
    var received: [UInt8] = []
    while let bytes = pair.receiveWithoutWaiting(), !bytes.isEmpty { received += bytes }
    pair.connection.writable()
    pair.connection.readable(hangup: false)
    #expect(!unread(pair.connection.fd))
    while let bytes = pair.receiveWithoutWaiting(), !bytes.isEmpty { received += bytes }
    #expect(received.suffix(3) == [0x8A, 1, 2])
}

@Test func aFailedConnectionReadsOnlyItsAllowanceThenWaitsForTheHangUp() throws {
    let pair = try Pair()
    defer { pair.close() }
    pair.upgrade()
    pair.connection.fail(code: .policyViolation, reason: "rate limit exceeded")
    let before = pair.owner.metrics.bytesIn
    // The peer goes on sending: 100 KB of frames, more than the allowance.
    pair.send(Array(repeating: clientFrame(0x1, Array(repeating: 0x66, count: 100)), count: 1000).flatMap { $0 })
    pair.connection.readable(hangup: false)
    #expect(pair.owner.metrics.bytesIn - before == Connection.failedReadAllowance)
    #expect(unread(pair.connection.fd))
    #expect(!pair.connection.lifecycle.isClosed)
    // Its hang-up ends the connection without reading the rest.
    shutdown(pair.peer, Int32(SHUT_WR))
    pair.connection.readable(hangup: true)
    #expect(pair.connection.lifecycle.isClosed)
    #expect(pair.owner.metrics.bytesIn - before == Connection.failedReadAllowance)
}

@Test func aPeerOverThePingRateIsClosedWith1008() throws {
    let pair = try Pair()
    defer { pair.close() }
    pair.upgrade()
    let limit = pair.owner.limits.maxPingsPerSecond
    pair.send(Array(repeating: clientFrame(0x9, [1]), count: limit).flatMap { $0 })
    #expect(pair.connection.lifecycle.isOpen)
    pair.owner.now += 1_000_000_000
    pair.send(Array(repeating: clientFrame(0x9, [2]), count: limit).flatMap { $0 })
    #expect(pair.connection.lifecycle.isOpen)
    pair.send(clientFrame(0x9, [3]))
    #expect(!pair.connection.lifecycle.isOpen)
    let sent = pair.receive() ?? []
    let close = sent.lastIndex(of: 0x88) ?? sent.endIndex
    #expect(Array(sent[close...].dropFirst(2).prefix(2)) == [0x03, 0xF0], "a close frame with 1008")
    #expect(pair.owner.metrics.closesByCode[1008] == 1)
}
