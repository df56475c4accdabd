import Bytes
import Deflate
import HTTP
import Relay
import Synchronization
import WebSocket

/// `/rooms/{room}` on one loop: the plain relay. Every message goes, byte for byte, to every
/// other member, on this loop and on the others.
///
/// A message is framed once and the same chunk is queued on every member of this loop: no
/// per-member copy. For members on other loops it is handed over once per loop, framed, in the
/// loop's next hand-off; that loop queues it on its members the same way. Which loops have
/// members of a room is in the shared `RoomTable`; the chat loop's `RoomDirectory` counts
/// every join and leave and sends the notices. Each member publishes within its `PublishRate`
/// (`roomMessagesPerSecond`, `roomBytesPerSecond`). Confined to its event loop thread.
final class RoomEndpoint: Endpoint {
    /// This loop's members of each room.
    let rooms = RoomRegistry<Member>()
    /// The shared table's entries of the rooms this loop has members of.
    private var entries: [String: RoomTable.Entry] = [:]
    /// Which loops have members of each room (set with `peers`, before any loop runs).
    var table: RoomTable?
    /// On the chat loop: every room's members on every loop (nil on the other loops).
    var directory: RoomDirectory?
    unowned let server: Server
    let messagesPerSecond: Int
    let bytesPerSecond: Int

    init(server: Server, messagesPerSecond: Int = 100, bytesPerSecond: Int = 1 << 20) {
        self.server = server
        self.messagesPerSecond = messagesPerSecond
        self.bytesPerSecond = bytesPerSecond
    }

    func session(for connection: Connection, head: HTTPRequestHead, user: String?) -> Session {
        guard case .room(let name) = Route(path: head.path) else {
            preconditionFailure("the room endpoint is only chosen for /rooms/{room}")
        }
        let displayName = user ?? head.query["name"].flatMap { $0.isEmpty ? nil : String($0.prefix(64)) }
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

        /// The shared entry of the room, from `opened` on: where its other members are.
        private var entry: RoomTable.Entry?

        func opened() {
            entry = endpoint.join(room, self)
            endpoint.report(room, displayName, joined: true)
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
                connection.fail(code: .policyViolation, reason: "rate limit exceeded")
                return
            }
            let loops = entry?.loops.load(ordering: .acquiring) ?? 0
            endpoint.publish(message, in: room, toLoops: loops, except: self, arrivedAt: connection.owner.now)
            if endpoint.server.configuration.redis != nil {
                let (room, opcode, payload) = (room, message.opcode, message.payload)
                endpoint.server.onChatLoop { chatLoop in chatLoop.cluster?.publish(room, opcode, payload) }
            }
        }

        func closed() {
            endpoint.leave(room, self)
            endpoint.report(room, displayName, joined: false)
        }
    }

    /// Adds `member` to this loop's members of `room`; the first one marks the room in the table.
    private func join(_ room: String, _ member: Member) -> RoomTable.Entry? {
        guard rooms.join(room, member) == 1 || entries[room] == nil else { return entries[room] }
        let entry = table?.enter(room, loop: server.index)
        entries[room] = entry
        return entry
    }

    private func leave(_ room: String, _ member: Member) {
        guard rooms.leave(room, member) == 0, entries.removeValue(forKey: room) != nil else { return }
        table?.leave(room, loop: server.index)
    }

    /// Queues `message`, which arrived at `arrival` (loop time), on every member of `room` but
    /// `except`: this loop's now, those of the other loops in `loops` (bits) in their next
    /// hand-off.
    func publish(_ message: OutgoingMessage, in room: String, toLoops loops: UInt64, except: Member?, arrivedAt arrival: UInt64) {
        var message = message
        deliver(&message, in: room, except: except, arrivedAt: arrival)
        let others = loops & ~(1 << UInt64(server.index))
        guard others != 0 else { return }
        let shared = message.forAnotherLoop()
        for peer in server.peers where others & (1 << UInt64(peer.index)) != 0 {
            server.post(to: peer.index) {
                var message = shared
                peer.rooms.deliver(&message, in: room, except: nil, arrivedAt: arrival)
            }
        }
    }

    /// The publish API's message to `room` (on the chat loop): to every member on every loop.
    func publish(_ message: OutgoingMessage, in room: String, arrivedAt arrival: UInt64) {
        publish(message, in: room, toLoops: table?.loops(of: room) ?? 0, except: nil, arrivedAt: arrival)
    }

    private func deliver(_ message: inout OutgoingMessage, in room: String, except: Member?, arrivedAt arrival: UInt64) {
        let members = rooms.members(of: room)
        var count = 0
        for member in members where member !== except {
            member.connection.deliver(&message, arrivedAt: arrival)
            count += 1
        }
        server.metrics.messagesSent[.room] += count
    }

    // MARK: Joins, leaves and notices

    /// Tells the directory on the chat loop that a member of this loop joined or left.
    private func report(_ room: String, _ name: String, joined: Bool) {
        let loop = server.index
        server.onChatLoop { chatLoop in chatLoop.rooms.count(room, name, joined: joined, on: loop) }
    }

    /// On the chat loop: counts a join or leave on loop `loop`, then sends the notice with the
    /// new count to every loop with members of the room. Every member sees the notices of a room
    /// in the one order they were counted in.
    private func count(_ room: String, _ name: String, joined: Bool, on loop: Int) {
        guard let directory else { preconditionFailure("the room directory lives on the chat loop") }
        let change = joined ? directory.joined(room, name, on: loop) : directory.left(room, name, on: loop)
        if let cluster = server.cluster {
            cluster.counted(room, name, joined: joined, localOnline: change.online)
            return
        }
        let notice = "* \(name) \(joined ? "joined" : "left") (\(change.online) online)"
        for index in change.loopsWithMembers {
            let peer = server.peers[index]
            server.post(to: index) { peer.rooms.notify(room, notice) }
        }
    }

    /// The notice a publisher over its rate gets, at most once a second.
    var slowDown: String {
        "* slow down: at most \(messagesPerSecond) messages and \(bytesPerSecond) bytes a second; messages over it are dropped"
    }

    /// Sends `text` to this loop's members of `room` that want notices.
    func notify(_ room: String, _ text: String) {
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
