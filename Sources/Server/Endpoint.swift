import HTTP
import WebSocket

/// What runs behind a WebSocket path: `/echo`, `/rooms/{room}`, `/ws`.
///
/// Called on the event loop thread. `closed` is called exactly once per `opened`, as soon as
/// the server decides the connection is over (before the socket is gone), so rooms and
/// presence are updated at once.
protocol Endpoint: AnyObject {
    func opened(_ connection: Connection, head: HTTPRequestHead)
    /// A complete message; `compressed` is its payload as received when it was compressed and
    /// stands alone (`WebSocketEvent.text`), which a relay may send on as it is.
    func received(_ connection: Connection, opcode: Opcode, payload: [UInt8], compressed: [UInt8]?)
    func closed(_ connection: Connection)
}

/// The outcome of choosing an endpoint for an upgrade request.
enum EndpointChoice {
    case accept(any Endpoint)
    case refuse(HTTPResponse)
}

/// `/echo`: every message back to its sender, same opcode, same bytes.
final class EchoEndpoint: Endpoint {
    func opened(_ connection: Connection, head: HTTPRequestHead) {}

    func received(_ connection: Connection, opcode: Opcode, payload: [UInt8], compressed: [UInt8]?) {
        connection.server.metrics.messagesOut += 1
        var message = OutgoingMessage(opcode, payload: payload, compressedAsReceived: compressed)
        connection.send(message.frame(for: connection))
    }

    func closed(_ connection: Connection) {}
}
