import Bytes
import Deflate
import HTTP
import WebSocket

/// The HTTP phase: requests parsed from the stream and handed to the owner, responses (now or,
/// for a request that waits on the disk, later), a streamed response, and the switch to the
/// WebSocket protocol.
extension Connection {
    /// Parses requests from `bytes` and hands each to the owner; after an upgrade the rest of the
    /// bytes are the first WebSocket frames. While an answer is pending, input is held back and
    /// parsed once the answer is sent, so responses keep the order of their requests.
    func processHTTP(_ bytes: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < bytes.count, httpParser != nil, lifecycle.acceptsOutput, !isAwaitingResponse {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
            var refusal: HTTPResponse?
            let result = httpParser!.parse(rest) { head in
                switch owner.admitBody(of: head, on: self) {
                case .read(let maxBytes, let deadline):
                    if let deadline { lifecycle.extendDeadline(to: deadline) }
                    return maxBytes
                case .hold(let maxBytes, let deadline):
                    if let deadline { lifecycle.extendDeadline(to: deadline) }
                    bodyOnHold = true
                    return maxBytes
                case .refuse(let response):
                    refusal = response
                    return nil
                }
            }
            switch result {
            case .needMoreData:
                return
            case .unreadBody:
                metrics.httpErrors += 1
                if let refusal { send(refusal, keepAlive: false) }
                return
            case .failure(let error):
                metrics.httpErrors += 1
                send(.error(error.status, code: Connection.errorCode(error), message: "\(error)"), keepAlive: false)
                return
            case .request(let head, let body, let consumed):
                // A held body that came whole with its head needs no release.
                bodyOnHold = false
                offset += consumed
                messagesRead += 1
                owner.respond(to: head, body: body, on: self)
            }
        }
        guard offset < bytes.count else { return }
        if isAwaitingResponse {
            hold(UnsafeRawBufferPointer(rebasing: bytes[offset...]))
        } else if lifecycle.isOpen {
            processWebSocket(UnsafeRawBufferPointer(rebasing: bytes[offset...]))
        }
    }

    private static func errorCode(_ error: HTTPParseError) -> String {
        switch error {
        case .bodyTooLarge: "too_large"
        case .lengthRequired: "length_required"
        case .headersTooLarge, .malformed, .unsupportedVersion: "bad_request"
        }
    }

    /// Keeps input that came behind a request whose answer is pending; more than one request's
    /// worth means the client is not waiting for answers, and it is dropped.
    private func hold(_ bytes: UnsafeRawBufferPointer) {
        heldInput.append(contentsOf: bytes)
        if heldInput.count > limits.maxHeadBytes + limits.maxBodyBytes {
            metrics.httpErrors += 1
            perform(lifecycle.ended())
        }
    }

    /// Answers a request whose body is still arriving (or still held) at its deadline with `408`
    /// and closes: the client learns why, where a head that trickles is just dropped. Called at
    /// the tick.
    func answerTimedOutBody(now: UInt64) -> Bool {
        guard lifecycle.isPast(deadline: now), httpParser?.isReadingBody == true, !isAwaitingResponse else { return false }
        metrics.httpErrors += 1
        send(.error(.requestTimeout, code: "timeout", message: "the request body did not arrive in time"), keepAlive: false)
        releaseBody()
        return true
    }

    /// Refuses the request whose body is still arriving, for a reason found elsewhere (the chat
    /// loop checks an upload's head, `Server.admitBody`): answered and closed, like a refusal
    /// from the head. A body that has arrived meanwhile is answered with its request instead.
    func refuseBody(_ response: HTTPResponse) {
        guard httpParser?.isReadingBody == true, !isAwaitingResponse, lifecycle.acceptsOutput else { return }
        metrics.httpErrors += 1
        send(response, keepAlive: false)
        // What the peer sends from here on is read and dropped until its end of stream.
        releaseBody()
    }

    /// Reads the body the owner held (`BodyAdmission.hold`) from here on.
    func releaseBody() {
        guard bodyOnHold else { return }
        bodyOnHold = false
        loop.readLater(fd)
    }

    /// The answer to the current request comes later (`send(_:keepAlive:)` when it is ready).
    func deferResponse() {
        isAwaitingResponse = true
    }

    /// Queues an HTTP response; without keep-alive the connection closes once it is written,
    /// as it does after its last allowed request (`ConnectionLimits.maxRequestsPerConnection`).
    /// Input held while this answer was pending is parsed now.
    func send(_ response: HTTPResponse, keepAlive: Bool) {
        guard lifecycle.acceptsOutput, lifecycle.isHTTP else { return }
        let keepAlive = keepAlive && lifecycle.mayKeepAlive
        enqueue(ByteChunk(response.serialize(keepAlive: keepAlive)))
        perform(lifecycle.responded(keepAlive: keepAlive, now: owner.now))
        guard isAwaitingResponse else { return }
        isAwaitingResponse = false
        let held = heldInput
        heldInput = []
        if !held.isEmpty { held.withUnsafeBytes { processHTTP($0) } }
    }

    /// Answers the request with `head` (a `200` whose body follows in pieces) and hands the
    /// connection to `session`, which writes the body with `send(_:)` until either side ends it.
    func stream(_ head: HTTPResponse, to session: any EndpointSession) {
        enqueue(ByteChunk(head.serialize(keepAlive: true)))
        httpParser = nil
        lifecycle.streamed()
        self.session = .stream(session)
        session.opened()
    }

    /// Answers a connection refused at accept with `answer` (nothing for TLS) and ends it
    /// without reading a request: the close follows once the peer has read the answer.
    func refuse(_ answer: [UInt8]) {
        httpParser = nil
        if !answer.isEmpty { enqueue(ByteChunk(answer)) }
        perform(lifecycle.finish(now: owner.now))
    }

    /// Answers the request with `response` (a `101`) and speaks WebSocket from here on, with
    /// `endpoint`'s session for this connection (for `user`, when the request signed one in).
    /// After a deferred answer (`deferResponse`), input held meanwhile is the first frames.
    func upgrade(
        _ response: HTTPResponse, to endpoint: any Endpoint, head: HTTPRequestHead, user: String? = nil,
        compression: ConnectionCompression?
    ) {
        enqueue(ByteChunk(response.serialize(keepAlive: true)))
        httpParser = nil
        self.compression = compression
        webSocket = WebSocketConnection(
            configuration: .init(maxMessageSize: limits.maxMessageSize), decompressor: compression?.inflater)
        lifecycle.upgraded(now: owner.now)
        let session = endpoint.session(for: self, head: head, user: user)
        self.session = session
        session.base.opened()
        guard isAwaitingResponse else { return }
        isAwaitingResponse = false
        let held = heldInput
        heldInput = []
        if !held.isEmpty { held.withUnsafeBytes { processWebSocket($0) } }
    }
}
