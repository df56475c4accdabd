import Bytes
import Deflate
import HTTP
import Relay
import WebSocket

/// `/rooms/{room}`: the plain relay. Every message goes, byte for byte, to every other member.
///
/// A message is framed once and the same chunk is queued on every member: no per-member copy.
/// Each member publishes within its `PublishRate` (`roomMessagesPerSecond`,
/// `roomBytesPerSecond`).
final class RoomEndpoint: Endpoint {
    let rooms = RoomRegistry<Member>()
    /// Who is in each room by name, for the presence stream, webhook and snapshot.
    let presence = RoomPresence()
    /// The user name for a valid `token` query parameter, if any (the chat service's accounts).
    private let userName: (HTTPRequestHead) -> String?
    let messagesPerSecond: Int
    let bytesPerSecond: Int
    private let metrics: Metrics

    init(
        metrics: Metrics, messagesPerSecond: Int = 100, bytesPerSecond: Int = 1 << 20,
        userName: @escaping (HTTPRequestHead) -> String?
    ) {
        self.metrics = metrics
        self.messagesPerSecond = messagesPerSecond
        self.bytesPerSecond = bytesPerSecond
        self.userName = userName
    }

    func session(for connection: Connection, head: HTTPRequestHead) -> Session {
        guard case .room(let name) = Route(path: head.path) else {
            preconditionFailure("the room endpoint is only chosen for /rooms/{room}")
        }
        let displayName = userName(head) ?? head.query["name"].flatMap { $0.isEmpty ? nil : String($0.prefix(64)) }
            ?? RoomEndpoint.guestName()
        return .relay(Member(connection, endpoint: self, room: name, displayName: displayName,
                             wantsNotices: head.query["notices"] != "0"))
    }

    /// One connection in one room, and how it is shown there.
    final class Member: RelaySession {
        unowned let connection: Connection
        unowned let endpoint: RoomEndpoint
        let room: String
        let displayName: String
        /// `notices=0` turns the `* ... joined` and `* ... left` lines off.
        let wantsNotices: Bool
        private var rate: PublishRate

        init(_ connection: Connection, endpoint: RoomEndpoint, room: String, displayName: String, wantsNotices: Bool) {
            self.connection = connection
            self.endpoint = endpoint
            self.room = room
            self.displayName = displayName
            self.wantsNotices = wantsNotices
            self.rate = PublishRate(
                messagesPerSecond: endpoint.messagesPerSecond, bytesPerSecond: endpoint.bytesPerSecond,
                now: connection.owner.now)
        }

        var kind: EndpointKind { .room }

        func opened() {
            let count = endpoint.rooms.join(room, self)
            endpoint.presence.joined(room, displayName)
            endpoint.notify(room, "* \(displayName) joined (\(count) online)")
        }

        func relay(_ message: OutgoingMessage) {
            switch rate.admit(bytes: message.payload.count, now: connection.owner.now) {
            case .allow:
                break
            case .drop(let notify):
                connection.metrics.droppedPublishes += 1
                if notify {
                    var notice = OutgoingMessage(.text, payload: Array(endpoint.slowDown.utf8))
                    connection.send(&notice)
                }
                return
            case .close:
                connection.close(code: .policyViolation, reason: "rate limit exceeded")
                return
            }
            let members = endpoint.rooms.members(of: room)
            guard members.count > 1 else { return }
            endpoint.deliver(message, to: members, except: self, arrivedAt: connection.owner.now)
        }

        func closed() {
            let count = endpoint.rooms.leave(room, self)
            endpoint.presence.left(room, displayName)
            endpoint.notify(room, "* \(displayName) left (\(count) online)")
        }
    }

    /// Queues `message`, which arrived at `arrival` (loop time), on every member but `except`;
    /// returns how many got it.
    @discardableResult
    func deliver(_ message: OutgoingMessage, to members: ContiguousArray<Member>, except: Member?, arrivedAt arrival: UInt64) -> Int {
        var message = message
        var count = 0
        for member in members where member !== except {
            member.connection.deliver(&message, arrivedAt: arrival)
            count += 1
        }
        metrics.messagesSent[.room] += count
        return count
    }

    /// The notice a publisher over its rate gets, at most once a second.
    var slowDown: String {
        "* slow down: at most \(messagesPerSecond) messages and \(bytesPerSecond) bytes a second; messages over it are dropped"
    }

    private func notify(_ room: String, _ text: String) {
        var message = OutgoingMessage(.text, payload: Array(text.utf8))
        for member in rooms.members(of: room) where member.wantsNotices {
            member.connection.send(&message)
        }
    }

    /// `guest-` and four random digits, the default display name.
    static func guestName() -> String {
        "guest-\(Int.random(in: 1000...9999))"
    }
}
