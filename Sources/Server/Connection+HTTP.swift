import Bytes
import Deflate
import HTTP
import WebSocket

extension Connection {
    /// Parses requests from `bytes` and answers them; after an upgrade the rest of the bytes
    /// are the first WebSocket frames.
    func processHTTP(_ bytes: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < bytes.count, phase == .http, httpParser != nil {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
            switch httpParser!.parse(rest) {
            case .needMoreData:
                return
            case .failure(let error):
                server.metrics.httpErrors += 1
                send(.error(error.status, code: "bad_request", message: "\(error)"), keepAlive: false)
                return
            case .request(let head, let consumed):
                offset += consumed
                respond(to: head)
            }
        }
        if phase == .webSocket && offset < bytes.count {
            processWebSocket(UnsafeRawBufferPointer(rebasing: bytes[offset...]))
        }
    }

    private func respond(to head: HTTPRequestHead) {
        guard head.method == "GET" else {
            var response = HTTPResponse.error(
                .methodNotAllowed, code: "method_not_allowed", message: "only GET is served here")
            response.headers.add("Allow", "GET")
            send(response, keepAlive: false)
            return
        }
        let keepAlive = head.keepAlive && !head.hasBody
        let route = Route(path: head.path)
        if route.isWebSocket && head.headers.containsToken("websocket", in: "Upgrade") {
            upgrade(head, route: route)
        } else {
            send(server.plainResponse(for: route, head: head), keepAlive: keepAlive)
        }
    }

    private func upgrade(_ head: HTTPRequestHead, route: Route) {
        switch server.endpoint(for: route, head: head) {
        case .refuse(let response):
            send(response, keepAlive: false)
        case .accept(let chosen):
            switch WebSocketUpgrade.evaluate(head, allowedOrigins: server.configuration.allowedOrigins) {
            case .refuse(let response):
                send(response, keepAlive: false)
            case .accept(var response):
                guard server.webSocketCount < server.configuration.maxConnections else {
                    send(.error(.serviceUnavailable, code: "unavailable",
                                message: "the server is at its connection limit; try again later"),
                         keepAlive: false)
                    return
                }
                deflate = server.negotiateCompression(head, response: &response)
                if let deflate, !deflate.serverNoContextTakeover {
                    ownDeflater = deflate.makeDeflater(configuration: server.configuration.deflate)
                }
                enqueue(ByteChunk(response.serialize(keepAlive: true)))
                httpParser = nil
                webSocket = WebSocketConnection(
                    configuration: .init(maxMessageSize: server.configuration.maxMessageSize),
                    decompressor: deflate.map {
                        $0.clientNoContextTakeover ? server.sharedInflater(windowBits: $0.clientMaxWindowBits) : $0.makeInflater()
                    })
                phase = .webSocket
                lastPing = loop.now
                server.webSocketCount += 1
                self.endpoint = chosen
                chosen.opened(self, head: head)
            }
        }
    }
}
