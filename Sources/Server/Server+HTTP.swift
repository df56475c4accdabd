import Bytes
import HTTP
import WebSocket

/// Answering requests: plain responses, and upgrades to an endpoint's WebSocket.
extension Server {
    func respond(to head: HTTPRequestHead, on connection: Connection) {
        guard head.method == "GET" || head.method == "HEAD" else {
            var response = HTTPResponse.error(
                .methodNotAllowed, code: "method_not_allowed", message: "only GET and HEAD are served here")
            response.headers.add("Allow", "GET, HEAD")
            connection.send(response, keepAlive: false)
            return
        }
        let keepAlive = head.keepAlive && !head.hasBody
        let route = Route(path: head.path)
        if head.method == "GET" && route.isWebSocket && head.headers.containsToken("websocket", in: "Upgrade") {
            upgrade(connection, head, route: route)
        } else {
            let response = plainResponse(for: route, head: head)
            connection.send(head.method == "HEAD" ? response.headResponse() : response, keepAlive: keepAlive)
        }
    }

    private func upgrade(_ connection: Connection, _ head: HTTPRequestHead, route: Route) {
        let endpoint: any Endpoint
        switch self.endpoint(for: route, head: head) {
        case .refuse(let response):
            return connection.send(response, keepAlive: false)
        case .accept(let chosen):
            endpoint = chosen
        }
        var response: HTTPResponse
        switch WebSocketUpgrade.evaluate(head, allowedOrigins: configuration.allowedOrigins) {
        case .refuse(let refusal):
            return connection.send(refusal, keepAlive: false)
        case .accept(let accepted):
            response = accepted
        }
        guard webSocketCount < configuration.maxConnections else {
            return connection.send(
                .error(.serviceUnavailable, code: "unavailable",
                       message: "the server is at its connection limit; try again later"),
                keepAlive: false)
        }
        let negotiated = compression.negotiate(offers: head.headers.values("Sec-WebSocket-Extensions"))
        if let negotiated { response.headers.add("Sec-WebSocket-Extensions", negotiated.answer) }
        webSocketCount += 1
        connection.upgrade(response, to: endpoint, head: head, compression: negotiated?.compression)
    }
}
