import Chat
import HTTP
import Posix

/// Presence for operators: the snapshot (`GET /api/v1/presence`), the event stream
/// (`GET /api/v1/presence/stream`) with its short-lived tokens, and the presence webhook, all
/// fed from one place: `presenceChanged(_:)`.
extension Server {
    /// `{"groups":[...],"rooms":[...],"onlineUsers":n,"connections":n}`: chat groups with
    /// someone online, and every plain room (ChatService.presenceSnapshot(rooms:)).
    func presenceSnapshot() -> [UInt8] {
        chat?.service?.presenceSnapshot(rooms: roomPresence?.snapshot ?? []) ?? Array(#"{"groups":[],"rooms":[]}"#.utf8)
    }

    /// Who is in the plain rooms, on the chat loop: every node's members in cluster mode
    /// (ClusterPresence), this node's otherwise.
    var roomPresence: RoomPresence? {
        cluster?.presence.view ?? rooms.directory?.presence
    }

    /// A folded change in a group or a room: out to the stream and the presence webhook.
    func presenceChanged(_ change: PresenceChange) {
        presenceStream.publish(change)
        presenceWebhook?.enqueue(change.json, type: "presence")
    }

    /// The rooms' folded changes of the last window (the chat's come through its observer).
    func flushRoomPresence() {
        for change in roomPresence?.flush() ?? [] { presenceChanged(change) }
        // In cluster mode this node's own view only feeds its share in Redis; its changes
        // are folded away unseen.
        if cluster != nil { _ = rooms.directory?.presence.flush() }
    }

    func scheduleHeartbeat() {
        loop.schedule(afterMilliseconds: presenceStream.heartbeatMilliseconds) { [unowned self] in
            presenceStream.heartbeat()
            scheduleHeartbeat()
        }
    }

    /// `GET /api/v1/presence/stream`: with the admin token in the header or a stream token in
    /// the query, the connection becomes a stream of Server-Sent Events. `Last-Event-ID` (or the
    /// `lastEventId` query parameter, for a page that opens a new `EventSource`) resumes.
    func openPresenceStream(_ head: HTTPRequestHead, on connection: Connection) {
        if let refusal = adminRefusal(head, acceptingStreamToken: true) {
            return connection.send(refusal, keepAlive: head.keepAlive)
        }
        let response = HTTPResponse(status: .ok, headers: [
            "Content-Type": "text/event-stream; charset=utf-8",
            "Cache-Control": "no-store",
            "Transfer-Encoding": "chunked",
            // Tells nginx and similar proxies not to hold events back in a buffer.
            "X-Accel-Buffering": "no",
        ])
        let lastEventID = head.headers["Last-Event-ID"] ?? head.query["lastEventId"]
        connection.stream(response, to: PresenceStream.Subscriber(
            ConnectionHandle(connection, home: index), server: self, lastEventID: lastEventID))
    }

    /// `POST /api/v1/presence/token` (admin): `{"token":"...","expiresIn":60}` for the stream's query.
    func presenceTokenResponse(_ head: HTTPRequestHead) -> HTTPResponse {
        if let refusal = adminRefusal(head) { return refusal }
        let key = Array((configuration.adminToken ?? "").utf8)
        let expiresAt = SystemClock.epochMilliseconds() / 1000 + StreamToken.lifetimeSeconds
        var response = HTTPResponse.json(
            .ok, body: #"{"token":"\#(StreamToken.issue(key: key, expiresAt: expiresAt))","expiresIn":\#(StreamToken.lifetimeSeconds)}"#)
        response.headers.add("Cache-Control", "no-store")
        return response
    }
}
