import Bytes
import HTTP
import Relay
import WebSocket

/// `/rooms/{room}`: the plain relay. Every message goes, byte for byte, to every other member.
///
/// A message is framed once and the same chunk is queued on every member: no per-member copy.
final class RoomEndpoint: Endpoint {
    let rooms = RoomRegistry<Connection>()

    func opened(_ connection: Connection, head: HTTPRequestHead) {
        guard case .room(let name) = Route(path: head.path) else { return }
        connection.roomName = name
        connection.wantsNotices = head.query["notices"] != "0"
        connection.displayName = connection.server.chatUserName(head) ?? head.query["name"].flatMap { $0.isEmpty ? nil : String($0.prefix(64)) }
            ?? RoomEndpoint.guestName()
        let count = rooms.join(name, connection)
        notify(name, "* \(connection.displayName) joined (\(count) online)")
    }

    func received(_ connection: Connection, opcode: Opcode, payload: [UInt8], compressed: [UInt8]?) {
        guard let name = connection.roomName else { return }
        let members = rooms.members(of: name)
        guard members.count > 1 else { return }
        var message = OutgoingMessage(opcode, payload: payload, compressedAsReceived: compressed)
        for member in members where member !== connection {
            member.send(message.frame(for: member))
        }
        connection.server.metrics.messagesOut += members.count - 1
    }

    func closed(_ connection: Connection) {
        guard let name = connection.roomName else { return }
        connection.roomName = nil
        let count = rooms.leave(name, connection)
        notify(name, "* \(connection.displayName) left (\(count) online)")
    }

    private func notify(_ room: String, _ text: String) {
        var message = OutgoingMessage(.text, payload: Array(text.utf8))
        for member in rooms.members(of: room) where member.wantsNotices {
            member.send(message.frame(for: member))
        }
    }

    /// `guest-` and four random digits, the default display name.
    static func guestName() -> String {
        "guest-\(Int.random(in: 1000...9999))"
    }
}
