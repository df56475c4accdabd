import Chat
import Deflate
import HTTP
import Relay

/// The server-side publish API (admin): `POST /api/v1/rooms/{room}/messages` relays the body to a
/// plain room, `POST /api/v1/groups/{id}/messages` stores a message from a named system sender
/// and answers once it is durable, like a `/ws` `send` (docs/operations.md, "Publish API").
/// Both run on the chat loop, where the room directory and the chat service are.
extension Server {
    /// The body, which must be UTF-8 text, goes to every member of `room` as one text frame,
    /// exactly as a member's frame would. Answers `{"room","delivered":n}`: the room's members
    /// on every loop.
    func publishToRoom(_ room: String, body: [UInt8], head: HTTPRequestHead) -> HTTPResponse {
        if let refusal = adminRefusal(head) { return refusal }
        guard RoomName.isValid(room) else {
            return .error(.badRequest, code: "bad_request", message: "room names are 1 to 64 characters of A-Z a-z 0-9 . _ -")
        }
        guard !body.isEmpty, String(validating: body, as: UTF8.self) != nil else {
            return .error(.badRequest, code: "bad_request", message: "the body is the message: non-empty UTF-8 text")
        }
        metrics.messagesReceived[.room] += 1
        let delivered = rooms.directory?.count(of: room) ?? 0
        rooms.publish(OutgoingMessage(.text, payload: body), in: room, arrivedAt: now)
        cluster?.publish(room, .text, body)
        var json: [UInt8] = Array(#"{"room":"#.utf8)
        json.append(contentsOf: #""\#(room)","delivered":\#(delivered)}"#.utf8)
        return HTTPResponse(status: .ok, headers: ["Content-Type": "application/json"], body: json)
    }

    /// Stores the body's message in `group` (ChatService.publish) and answers `201
    /// {"message":{...}}` once it is on disk, or the error that refused it, through `reply`.
    func publishToGroup(_ group: String, body: [UInt8], head: HTTPRequestHead, reply: @escaping (HTTPResponse) -> Void) {
        if let refusal = adminRefusal(head) { return reply(refusal) }
        guard let service = chat?.service else {
            return reply(.error(.serviceUnavailable, code: "unavailable", message: "the chat store is not loaded"))
        }
        metrics.messagesReceived[.chat] += 1
        service.publish(group: group, body: body, arrival: now) { result in
            switch result {
            case .success(let message):
                var json: [UInt8] = Array(#"{"message":"#.utf8)
                json.append(contentsOf: message)
                json.append(UInt8(ascii: "}"))
                reply(HTTPResponse(status: .created, headers: ["Content-Type": "application/json"], body: json))
            case .failure(let error):
                reply(Server.response(for: error))
            }
        }
    }

    /// The HTTP answer for a refusal of the chat service: its code and message as JSON.
    static func response(for error: ChatError) -> HTTPResponse {
        .error(status(for: error.code), code: error.code.rawValue, message: error.message)
    }

    private static func status(for code: ChatError.Code) -> HTTPStatus {
        switch code {
        case .badRequest: .badRequest
        case .unauthorized: .unauthorized
        case .forbidden: .forbidden
        case .notFound: .notFound
        case .conflict: HTTPStatus(code: 409, reason: "Conflict")
        case .tooLarge: .contentTooLarge
        case .rateLimited: .tooManyRequests
        case .unavailable: .serviceUnavailable
        case .internal: .internalServerError
        }
    }
}
