import JSON
import Relay

/// The server-side publish API's group half (`POST /api/v1/groups/{id}/messages`): a message
/// from a named system sender, stored and delivered like a `send`.
extension ChatService {
    /// Stores `body`'s message in `gid` from the system sender it names and, once it is durable,
    /// delivers the `message` event to every subscriber and calls `completion` with the message
    /// (docs/protocol.md, "Objects"); with a `ChatError` when the body or the group is refused or
    /// the store fails.
    ///
    /// `body` is `{"text"|"imageUrl", "sender"?, "clientId"?}`; the message's `user` is
    /// `system:<sender>` (default `system`), which no user id can be (ids have no colon), so
    /// clients can show it as the service it is. A `clientId` the same sender already used in
    /// this group is answered with the stored message, nothing written and no event sent, as a
    /// `send` is, so a backend may retry a publish whose answer it lost. `arrival` is when the
    /// request arrived (monotonic nanoseconds), for the delivery latency.
    public func publish(
        group gid: String, body: [UInt8], arrival: UInt64, completion: @escaping (Result<[UInt8], ChatError>) -> Void
    ) {
        let sender: String
        let content: MessageContent
        do throws(ChatError) {
            guard acceptsChanges else { throw ChatError.clusterUnavailable }
            guard state.groups[gid] != nil else { throw ChatError.noSuchGroup }
            (sender, content) = try publishedContent(body)
        } catch {
            return completion(.failure(error))
        }
        storeOnce(sender, gid, content.clientId, answer: completion) { [self] in
            storeMessage(newMessage(content, from: sender), in: gid, arrival: arrival, completion: completion)
        }
    }

    /// Stores a new published message and, once it is durable, sends the event and completes.
    private func storeMessage(
        _ message: consuming ChatMessage, in gid: String, arrival: UInt64, completion: @escaping (Result<[UInt8], ChatError>) -> Void
    ) {
        let (messageJSON, written) = Self.writtenJSON(message, group: gid)
        let ticket = store.append(mutationCount: 1) { written.appendJournalLine(from: messageJSON, to: &$0) }
        let sender = message.user
        committed(ticket, message: message, in: gid) { [self] succeeded in
            guard succeeded else { return completion(.failure(.storeFailed)) }
            broadcast(Self.messageEvent(gid, messageJSON), group: gid, arrival: arrival)
            noteOfflineMembers(gid, sender: sender, messageJSON)
            completion(.success(messageJSON))
        }
    }

    /// The sender (`system:<sender>`) and content a publish body describes, checked like a `send`.
    private func publishedContent(
        _ body: [UInt8]
    ) throws(ChatError) -> (sender: String, content: MessageContent) {
        let value: JSONValue
        do {
            value = try JSONValue.parse(body, limits: JSONLimits(maxDepth: 4, maxBytes: configuration.maxRequestBytes))
        } catch {
            throw ChatError(.badRequest, "the body is not JSON: \(error)")
        }
        guard case .object(var object) = value else {
            throw ChatError(.badRequest, #"the body must be one JSON object: {"text":"...","sender":"..."}"#)
        }
        object["op"] = .string("publish")
        let request = try ChatRequest(object)
        let sender = try request.string("sender") ?? "system"
        // The same grammar as room names: safe in a user id, a log line and a URL.
        guard RoomName.isValid(sender) else {
            throw ChatError(.badRequest, "`sender` must be 1 to 64 characters of A-Z a-z 0-9 . _ -")
        }
        return ("system:" + sender, try messageContent(request))
    }
}
