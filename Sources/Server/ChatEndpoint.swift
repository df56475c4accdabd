import Chat
import HTTP
import WebSocket

/// `/ws` on one loop: the JSON chat protocol's connections, whose requests go to the one
/// `ChatService` on the chat loop (`ChatDelivery`, its transport).
///
/// Every loop has one; a reader posts what its connection hears (opened, each text message,
/// closed) to the chat loop, in order, and the service's replies and events come back the same
/// way. A token in the upgrade URL (`/ws?token=...`) signs the connection in at once; an invalid
/// one does not refuse the upgrade, the connection just starts signed out (it can still `auth`,
/// `login` or `signup`), because a browser cannot read the body of a refused upgrade and an
/// error reply over the socket says more. Confined to its event loop thread.
final class ChatEndpoint: Endpoint {
    unowned let server: Server
    /// Whether this endpoint's loop is the chat loop, where requests need no hand-off.
    let isOnChatLoop: Bool
    /// The chat loop's transport, set before any loop runs; nil until the store is open. Only
    /// the chat loop calls it: the other loops merely carry the reference to it.
    var chat: ChatDelivery?

    init(server: Server) {
        self.server = server
        self.isOnChatLoop = server.index == 0
    }

    func session(for connection: Connection, head: HTTPRequestHead, user: String?) -> Session {
        .reader(Reader(ConnectionHandle(connection, home: server.index), endpoint: self, token: head.query["token"]))
    }

    /// One `/ws` connection; what the service keeps for it is in the service (`ChatSession`).
    final class Reader: ReaderSession {
        let handle: ConnectionHandle
        /// Strong: the endpoint holds no reader, and an unowned reference costs a check and a
        /// retain on every request.
        let endpoint: ChatEndpoint
        private let token: String?

        init(_ handle: ConnectionHandle, endpoint: ChatEndpoint, token: String?) {
            self.handle = handle
            self.endpoint = endpoint
            self.token = token
        }

        var kind: EndpointKind { .chat }

        func opened() {
            let (handle, token) = (handle, token)
            onService { $0.opened(handle, token: token, address: handle.address) }
        }

        func received(_ opcode: Opcode, payload: [UInt8]) {
            // On the chat loop itself a request goes to the service directly: the closures
            // of a hand-off cost three allocations for every request.
            if opcode == .text, endpoint.isOnChatLoop, let service = endpoint.chat?.service {
                return service.received(handle, text: payload)
            }
            let handle = handle
            if opcode == .text {
                onService { $0.received(handle, text: payload) }
            } else {
                onService { $0.receivedBinary(handle) }
            }
        }

        func closed() {
            let handle = handle
            onService { $0.closed(handle) }
        }

        private func onService(_ body: @escaping (ChatService<ChatDelivery>) -> Void) {
            guard let chat = endpoint.chat else { return }
            endpoint.server.onChatLoop { _ in
                if let service = chat.service { body(service) }
            }
        }
    }
}
