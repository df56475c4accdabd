import Bytes
import HTTP
import WebSocket

/// Answering requests: plain responses, the publish API, the presence stream, and upgrades to
/// an endpoint's WebSocket.
extension Server {
    func respond(to head: HTTPRequestHead, body: [UInt8], on connection: Connection) {
        let route = Route(path: head.path)
        guard head.method == route.method else {
            var response = HTTPResponse.error(
                .methodNotAllowed, code: "method_not_allowed", message: "\(head.path) answers \(route.method) only")
            response.headers.add("Allow", route.method)
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
        case _ where route.isWebSocket && head.headers.containsToken("websocket", in: "Upgrade"):
            upgrade(connection, head, route: route)
        default:
            connection.send(plainResponse(for: route, head: head), keepAlive: head.keepAlive)
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
        guard sessionCount < configuration.maxConnections else {
            return connection.send(
                .error(.serviceUnavailable, code: "unavailable",
                       message: "the server is at its connection limit; try again later"),
                keepAlive: false)
        }
        let negotiated = compression.negotiate(offers: head.headers.values("Sec-WebSocket-Extensions"))
        if let negotiated { response.headers.add("Sec-WebSocket-Extensions", negotiated.answer) }
        sessionCount += 1
        connection.upgrade(response, to: endpoint, head: head, compression: negotiated?.compression)
    }

    /// A page from the public folder, with the headers a page needs: its type, revalidation, and
    /// the security headers (a Content-Security-Policy that allows only the server's own scripts,
    /// styles and connections, no framing, no MIME sniffing, no referrer).
    static func pageResponse(_ name: String, _ page: [UInt8]) -> HTTPResponse {
        let type = switch name.split(separator: ".").last {
        case "js": "text/javascript; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        default: "text/html; charset=utf-8"
        }
        return HTTPResponse(status: .ok, headers: [
            "Content-Type": type,
            "Cache-Control": "no-cache",
            "Content-Security-Policy":
                "default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data: https:; "
                + "frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
            "X-Content-Type-Options": "nosniff",
            "X-Frame-Options": "DENY",
            "Referrer-Policy": "no-referrer",
        ], body: page)
    }
}
