import Bytes
import HTTP
import WebSocket

/// Answering requests: plain responses, the publish API, the presence stream, and upgrades to
/// an endpoint's WebSocket.
extension Server {
    func respond(to head: HTTPRequestHead, body: [UInt8], on connection: Connection) {
        let route = Route(path: head.path)
        guard route.methods.contains(head.method) else {
            let allowed = route.methods.joined(separator: ", ")
            var response = HTTPResponse.error(
                .methodNotAllowed, code: "method_not_allowed", message: "\(head.path) answers \(allowed) only")
            response.headers.add("Allow", allowed)
            connection.send(response, keepAlive: false)
            return
        }
        switch route {
        case .groupMessages(let group):
            publishToGroup(group, body: body, head: head, on: connection)
        case .roomMessages(let room):
            connection.send(publishToRoom(room, body: body, head: head), keepAlive: head.keepAlive)
        case .presenceToken:
            connection.send(presenceTokenResponse(head), keepAlive: head.keepAlive)
        case .presenceStream:
            openPresenceStream(head, on: connection)
        case _ where head.method == "GET" && route.isWebSocket && head.headers.containsToken("websocket", in: "Upgrade"):
            upgrade(connection, head, route: route)
        default:
            let response = plainResponse(for: route, head: head)
            connection.send(head.method == "HEAD" ? response.headResponse() : response, keepAlive: head.keepAlive)
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
        let negotiated = compression.negotiate(offers: head.headers.values("Sec-WebSocket-Extensions"))
        if let negotiated { response.headers.add("Sec-WebSocket-Extensions", negotiated.answer) }
        connection.upgrade(response, to: endpoint, head: head, compression: negotiated?.compression)
    }
}
