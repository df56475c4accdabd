import Bytes
import Deflate
import HTTP
import WebSocket

/// The HTTP phase: requests parsed from the stream and handed to the owner, responses, and the
/// switch to the WebSocket protocol.
extension Connection {
    /// Parses requests from `bytes` and hands each to the owner; after an upgrade the rest of the
    /// bytes are the first WebSocket frames.
    func processHTTP(_ bytes: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < bytes.count, httpParser != nil, lifecycle.acceptsOutput {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
            switch httpParser!.parse(rest) {
            case .needMoreData:
                return
            case .failure(let error):
                metrics.httpErrors += 1
                send(.error(error.status, code: "bad_request", message: "\(error)"), keepAlive: false)
                return
            case .request(let head, let consumed):
                offset += consumed
                messagesRead += 1
                owner.respond(to: head, on: self)
            }
        }
        if lifecycle.isOpen && offset < bytes.count {
            processWebSocket(UnsafeRawBufferPointer(rebasing: bytes[offset...]))
        }
    }

    /// Queues an HTTP response; without keep-alive the connection closes once it is written,
    /// as it does after its last allowed request (`ConnectionLimits.maxRequestsPerConnection`).
    func send(_ response: HTTPResponse, keepAlive: Bool) {
        guard lifecycle.acceptsOutput, !lifecycle.isOpen else { return }
        let keepAlive = keepAlive && lifecycle.mayKeepAlive
        enqueue(ByteChunk(response.serialize(keepAlive: keepAlive)))
        perform(lifecycle.responded(keepAlive: keepAlive, now: owner.now))
    }

    /// Answers a connection refused at accept with `answer` (nothing for TLS) and ends it
    /// without reading a request: the close follows once the peer has read the answer.
    func refuse(_ answer: [UInt8]) {
        httpParser = nil
        if !answer.isEmpty { enqueue(ByteChunk(answer)) }
        perform(lifecycle.finish(now: owner.now))
    }

    /// Answers the request with `response` (a `101`) and speaks WebSocket from here on, with
    /// `endpoint`'s session for this connection.
    func upgrade(_ response: HTTPResponse, to endpoint: any Endpoint, head: HTTPRequestHead, compression: ConnectionCompression?) {
        enqueue(ByteChunk(response.serialize(keepAlive: true)))
        httpParser = nil
        self.compression = compression
        webSocket = WebSocketConnection(
            configuration: .init(maxMessageSize: owner.limits.maxMessageSize), decompressor: compression?.inflater)
        lifecycle.upgraded(now: owner.now)
        let session = endpoint.session(for: self, head: head)
        self.session = session
        session.base.opened()
    }
}
