import Bytes
import HTTP
import WebSocket

/// Answering requests: plain responses, the publish API, the presence stream, and upgrades to
/// an endpoint's WebSocket. A request whose answer needs the chat loop's state is answered
/// there and the answer comes back to the connection's loop (`Route.isAnsweredOnChatLoop`).
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
        case .presenceToken:
            connection.send(presenceTokenResponse(head), keepAlive: head.keepAlive)
        case .presenceStream:
            openPresenceStream(head, on: connection)
        case _ where head.method == "GET" && route.isWebSocket && head.headers.containsToken("websocket", in: "Upgrade"):
            upgrade(connection, head, route: route)
        default:
            // Answered now or later: `send` after `deferResponse` within this call is the same
            // as an answer without it.
            connection.deferResponse()
            guard route.isAnsweredOnChatLoop, index != 0 else {
                return answer(route, head, body, from: nil) { connection.send($0, keepAlive: head.keepAlive) }
            }
            let handle = ConnectionHandle(connection, home: index)
            onChatLoop { chatLoop in
                chatLoop.answer(route, head, body, from: ObjectIdentifier(handle.connection)) { response in
                    chatLoop.onHome(handle) { $0.send(response, keepAlive: head.keepAlive) }
                }
            }
        }
    }

    /// Answers a request that is not an upgrade nor a stream with `reply`, now or (a publish
    /// waiting for the disk, `/metrics` gathering every loop's counters) later. `connection`
    /// names the connection of a request passed on from another loop.
    private func answer(
        _ route: Route, _ head: HTTPRequestHead, _ body: [UInt8], from connection: ObjectIdentifier?,
        reply: @escaping (HTTPResponse) -> Void
    ) {
        switch route {
        case .groupMessages(let group):
            publishToGroup(group, body: body, head: head, reply: reply)
        case .roomMessages(let room):
            reply(publishToRoom(room, body: body, head: head))
        case .metrics:
            metricsResponse { reply(head.method == "HEAD" ? $0.headResponse() : $0) }
        case .mediaUpload:
            upload(head, body: body, from: connection, reply: reply)
        case .media(let id):
            serveMedia(id, head, reply: reply)
        case .mediaItem(let id):
            deleteMedia(id, head, reply: reply)
        default:
            let response = plainResponse(for: route, head: head)
            reply(head.method == "HEAD" ? response.headResponse() : response)
        }
    }

    /// Upgrades to the route's endpoint. A room request with a token learns its user from the
    /// chat loop first (the chat accounts live there), and the upgrade waits for the answer.
    private func upgrade(_ connection: Connection, _ head: HTTPRequestHead, route: Route) {
        guard case .room = route, index != 0, let token = head.query["token"], !token.isEmpty else {
            return upgrade(connection, head, route: route, user: chatUserName(head))
        }
        connection.deferResponse()
        let handle = ConnectionHandle(connection, home: index)
        let home = peers[index]
        onChatLoop { chatLoop in
            let user = chatLoop.chatUserName(head)
            chatLoop.onHome(handle) { connection in
                // The client may have gone meanwhile.
                guard connection.lifecycle.isHTTP, connection.lifecycle.acceptsOutput else { return }
                home.upgrade(connection, head, route: route, user: user)
            }
        }
    }

    private func upgrade(_ connection: Connection, _ head: HTTPRequestHead, route: Route, user: String?) {
        let endpoint: any Endpoint
        switch self.endpoint(for: route, head: head, user: user) {
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
        connection.upgrade(response, to: endpoint, head: head, user: user, compression: negotiated?.compression)
    }
}
