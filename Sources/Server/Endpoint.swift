import Deflate
import HTTP
import WebSocket

/// What runs behind a WebSocket path: `/echo`, `/rooms/{room}`, `/ws`.
///
/// For each upgraded connection the endpoint makes a session: the state it keeps for that
/// connection, which lives with the endpoint rather than in `Connection`. Called on the event
/// loop thread.
protocol Endpoint: AnyObject {
    /// The session for a connection that was just upgraded on `head`. It must not send yet:
    /// `EndpointSession.opened` follows once the connection holds it.
    func session(for connection: Connection, head: HTTPRequestHead) -> Session
}

/// What an endpoint keeps for one connection.
///
/// `closed` is called exactly once after `opened`, as soon as the server decides the connection
/// is over (before the socket is gone), so rooms and presence change at once.
protocol EndpointSession: AnyObject {
    /// Which endpoint this is, for metrics.
    var kind: EndpointKind { get }
    func opened()
    func closed()
}

/// A session that passes messages on (`/echo`, `/rooms`): it gets each message ready to relay,
/// carrying the sender's compressed form where that can be sent on as it is.
protocol RelaySession: EndpointSession {
    func relay(_ message: OutgoingMessage)
}

/// A session that reads messages (`/ws`): it gets the payload alone, so a compressed form is
/// never kept for it.
protocol ReaderSession: EndpointSession {
    func received(_ opcode: Opcode, payload: [UInt8])
}

/// A connection's session, in the form it takes messages.
enum Session {
    case relay(any RelaySession)
    case reader(any ReaderSession)
    /// A streamed HTTP response (`/api/v1/presence/stream`): it only writes.
    case stream(any EndpointSession)

    var base: any EndpointSession {
        switch self {
        case .relay(let session): session
        case .reader(let session): session
        case .stream(let session): session
        }
    }
}

/// The endpoints, as `/metrics` labels them.
enum EndpointKind: String, CaseIterable {
    case echo
    case room
    case chat
    /// The presence event stream (Server-Sent Events).
    case stream
}

/// The outcome of choosing an endpoint for an upgrade request.
enum EndpointChoice {
    case accept(any Endpoint)
    case refuse(HTTPResponse)
}

/// `/echo`: every message back to its sender, same opcode, same bytes.
final class EchoEndpoint: Endpoint {
    func session(for connection: Connection, head: HTTPRequestHead) -> Session {
        .relay(Echo(connection))
    }

    /// One echoing connection.
    final class Echo: RelaySession {
        unowned let connection: Connection

        init(_ connection: Connection) {
            self.connection = connection
        }

        var kind: EndpointKind { .echo }
        func opened() {}
        func closed() {}

        func relay(_ message: OutgoingMessage) {
            var message = message
            connection.metrics.messagesSent[.echo] += 1
            connection.deliver(&message, arrivedAt: connection.owner.now)
        }
    }
}
