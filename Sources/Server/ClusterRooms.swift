import Deflate
import Logging
import Redis
import WebSocket

/// `/rooms` across the nodes of a cluster, on the chat loop: the room channels this node
/// listens to, the messages it passes to and from Redis, the cluster-wide counts of its
/// notices, and its heartbeat (docs/cluster.md).
///
/// A node subscribes to a room's channel while it has members of the room and unsubscribes when
/// the last one leaves. A message a member sends is delivered on this node as on a single node
/// (RoomEndpoint) and published once to the room's channel; each other node with members gets
/// it once, frames it once and hands it to its loops. Every message carries the name of the
/// node it comes from, so a node drops its own when Redis echoes them back. One connection
/// publishes everything this node sends, in the order its loops posted it, so one member's
/// messages keep their order everywhere.
///
/// Joins and leaves are counted in Redis by one script each (`ClusterScripts.count`), which
/// publishes the notice with the room's new total; this node gives its own members the notice
/// from the script's answer, and only once the room's subscription is confirmed, so a member
/// that has seen its own join notice gets every message published after it. While Redis is
/// unreachable, local delivery goes on, notices carry this node's count, and on reconnect the
/// node writes its share of every room again (`ClusterScripts.sync`). Confined to the chat loop.
final class ClusterRooms {
    /// This node's subscription to one room's channel.
    private final class Subscription {
        var members = 0
        var confirmed = false
        /// Notices for this node's members that wait for the subscription's confirmation.
        var held: [String] = []
    }

    unowned let server: Server
    let node: String
    private let client: RedisClient
    private let subscriber: RedisSubscriber
    private let logger: Logger
    private let timeoutMilliseconds: Int
    private var rooms: [String: Subscription] = [:]
    private var heartbeat: UInt64?
    /// This node's share is in Redis since the command connection was last made.
    private var synced = false
    /// Room messages of this node's members published to Redis, those not published because
    /// Redis was unreachable, and messages of other nodes received (`/metrics`).
    private(set) var publishedMessages = 0
    private(set) var unpublishedMessages = 0
    private(set) var receivedMessages = 0

    static let channelPrefix = "switchboard:room:"
    static let presenceChannel = "switchboard:presence"
    /// `typing` in chat groups, as `node\ngroup\nuser` (not stored, so not in the journal).
    static let typingChannel = "switchboard:typing"
    /// Who is in every room on every node (the presence API, stream and webhook).
    let presence: ClusterPresence

    init(server: Server, url: RedisURL, node: String, timeoutMilliseconds: Int, logger: Logger) {
        self.server = server
        self.node = node
        self.logger = logger
        self.timeoutMilliseconds = timeoutMilliseconds
        presence = ClusterPresence(node: node)
        client = RedisClient(url: url, loop: server.loop, logger: logger)
        subscriber = RedisSubscriber(url: url, loop: server.loop, logger: logger)
        client.ready = { [unowned self] in
            sync()
            if presence.awaitsSnapshot && subscriber.isReady { takeSnapshot() }
        }
        client.down = { [unowned self] _ in
            synced = false
            updateReadiness()
        }
        subscriber.ready = { [unowned self] in
            presence.resync()
            updateReadiness()
            subscriber.subscribe(ClusterRooms.presenceChannel) { [unowned self] in takeSnapshot() }
        }
        subscriber.down = { [unowned self] in updateReadiness() }
        if let service = server.chat?.service {
            presence.chatChanged = { gid, uid, joined in service.remotePresence(gid, uid, joined: joined) }
            presence.chatSnapshot = { service.replaceRemotePresence($0) }
            service.onLocalPresence = { [unowned self] gid, uid, online in countChat(gid, uid, online: online) }
            service.onTyping = { [unowned self] gid, uid in
                guard client.isReady else { return }
                client.send(["PUBLISH", ClusterRooms.typingChannel, "\(node)\n\(gid)\n\(uid)"])
            }
            subscriber.subscribe(ClusterRooms.typingChannel)
        }
        subscriber.message = { [unowned self] channel, payload in
            if channel == ClusterRooms.presenceChannel {
                presence.received(payload)
            } else if channel == ClusterRooms.typingChannel {
                typed(payload)
            } else {
                received(channel, payload)
            }
        }
    }

    /// Both connections are up, this node's share is in Redis and its view of the rooms is
    /// live: what `/readyz` reports.
    var isReady: Bool { synced && client.isReady && subscriber.isReady && !presence.awaitsSnapshot }

    private func updateReadiness() {
        server.updateClusterReadiness()
    }

    func start() {
        client.start()
        subscriber.start()
        scheduleHeartbeat()
    }

    func close() {
        if let heartbeat { server.loop.cancel(timer: heartbeat) }
        heartbeat = nil
        client.close()
        subscriber.close()
    }

    // MARK: Messages

    /// A member of this node sent `payload` to `room` (already delivered here): once to Redis.
    func publish(_ room: String, _ opcode: Opcode, _ payload: [UInt8]) {
        guard client.isReady else {
            unpublishedMessages += 1
            return
        }
        publishedMessages += 1
        var message = header(opcode == .binary ? "b" : "t")
        message += payload
        client.send([Array("PUBLISH".utf8), Array((ClusterRooms.channelPrefix + room).utf8), message]) { [unowned self] result in
            if case .failure(let error) = result { logger.debug("room publish failed", metadata: ["error": "\(error)"]) }
        }
    }

    private func header(_ kind: Character) -> [UInt8] {
        Array(node.utf8) + [10] + Array(String(kind).utf8)
    }

    /// A message on a room's channel: from another node, to this node's members of the room.
    private func received(_ channel: String, _ payload: [UInt8]) {
        guard channel.hasPrefix(ClusterRooms.channelPrefix),
              let newline = payload.firstIndex(of: 10), newline + 1 < payload.count else { return }
        let room = String(channel.dropFirst(ClusterRooms.channelPrefix.count))
        guard !payload[..<newline].elementsEqual(node.utf8) else { return }
        let body = Array(payload[(newline + 2)...])
        switch payload[newline + 1] {
        case UInt8(ascii: "t"):
            receivedMessages += 1
            server.rooms.publish(OutgoingMessage(.text, payload: body), in: room, arrivedAt: server.now)
        case UInt8(ascii: "b"):
            receivedMessages += 1
            server.rooms.publish(OutgoingMessage(.binary, payload: body), in: room, arrivedAt: server.now)
        case UInt8(ascii: "n"):
            notify(room, String(decoding: body, as: UTF8.self))
        default:
            break
        }
    }

    /// A user of another node is typing in a chat group: this node's subscribers of it hear it.
    private func typed(_ payload: [UInt8]) {
        let parts = payload.split(separator: 10, maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].elementsEqual(node.utf8) else { return }
        server.chat?.service?.remoteTyping(String(decoding: parts[1], as: UTF8.self), String(decoding: parts[2], as: UTF8.self))
    }

    // MARK: Joins and leaves

    /// A member called `name` of this node joined or left `room`; `localOnline` is the room's
    /// members on this node afterwards, the count a notice carries while Redis is unreachable.
    func counted(_ room: String, _ name: String, joined: Bool, localOnline: Int) {
        let subscription = rooms[room] ?? subscribe(room)
        subscription.members += joined ? 1 : -1
        if subscription.members == 0 {
            rooms[room] = nil
            subscriber.unsubscribe(ClusterRooms.channelPrefix + room)
        }
        let verb = joined ? "joined" : "left"
        let arguments = [ClusterScripts.count, "0", room, node, name, joined ? "1" : "-1",
                         String(decoding: header("n"), as: UTF8.self)]
        client.send(["EVAL"] + arguments) { [unowned self] result in
            switch result {
            case .success(.integer(let total)):
                tell(room, "* \(name) \(verb) (\(total) online)", subscription)
            case .success(let other):
                logger.warning("room count answered \(other)")
            case .failure(let error):
                logger.debug("room count failed", metadata: ["error": "\(error)"])
                tell(room, "* \(name) \(verb) (\(localOnline) online)", subscription)
            }
        }
    }

    /// A user came online in chat group `gid` on this node (`online`), or is no longer online
    /// here: counted in Redis like a room's member, so every other node hears of it
    /// (docs/cluster.md, "Chat presence").
    private func countChat(_ gid: String, _ uid: String, online: Bool) {
        let arguments = [ClusterScripts.count, "0", ClusterPresence.chatPrefix + gid, node, uid, online ? "1" : "-1",
                         String(decoding: header("n"), as: UTF8.self)]
        client.send(["EVAL"] + arguments) { [unowned self] result in
            if case .failure(let error) = result { logger.debug("chat presence count failed", metadata: ["error": "\(error)"]) }
        }
    }

    private func subscribe(_ room: String) -> Subscription {
        let subscription = Subscription()
        rooms[room] = subscription
        subscriber.subscribe(ClusterRooms.channelPrefix + room) { [unowned self] in
            subscription.confirmed = true
            let held = subscription.held
            subscription.held = []
            for text in held { notify(room, text) }
        }
        return subscription
    }

    /// Gives this node's members a notice about one of them, once the room is subscribed.
    private func tell(_ room: String, _ text: String, _ subscription: Subscription) {
        if subscription.confirmed || rooms[room] !== subscription {
            notify(room, text)
        } else {
            subscription.held.append(text)
        }
    }

    private func notify(_ room: String, _ text: String) {
        let loops = server.rooms.table?.loops(of: room) ?? 0
        for peer in server.peers where loops & (1 << UInt64(peer.index)) != 0 {
            server.post(to: peer.index) { peer.rooms.notify(room, text) }
        }
    }

    // MARK: This node's share and heartbeat

    /// Asks Redis for every room's members, for the presence view.
    private func takeSnapshot() {
        client.send(["EVAL", ClusterScripts.snapshot, "0"]) { [unowned self] result in
            switch result {
            case .success(let answer):
                presence.snapshot(answer)
                updateReadiness()
            case .failure(let error):
                logger.debug("presence snapshot failed", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Writes this node's members of every room to Redis as they are now, replacing whatever
    /// Redis holds for this node (a share from before a reconnect, or from an earlier process
    /// with the same `nodeId`).
    private func sync() {
        var arguments = ["EVAL", ClusterScripts.sync, "0", node, String(keyMilliseconds)]
        for (room, name, connections) in server.rooms.directory?.presence.counts ?? [] {
            arguments += [room, name, String(connections)]
        }
        for (gid, uid) in server.chat?.service?.localPresence ?? [] {
            arguments += [ClusterPresence.chatPrefix + gid, uid, "1"]
        }
        client.send(arguments) { [unowned self] result in
            switch result {
            case .success:
                synced = true
            case .failure(let error):
                logger.warning("cluster sync failed", metadata: ["error": "\(error)"])
            }
            updateReadiness()
        }
    }

    /// How long this node's heartbeat key lives: two thirds of `nodeTimeout`. Renewed every
    /// third, so one late renewal is tolerated, and another node's renewal (every third as
    /// well) notices the expiry at most `nodeTimeout` after this node's last renewal.
    private var keyMilliseconds: Int { max(100, timeoutMilliseconds * 2 / 3) }

    /// Renews this node's heartbeat key three times per `nodeTimeout`, and takes the members of
    /// nodes whose key expired out of every room. A node that finds its own key expired (its
    /// loop or Redis stalled for longer than the key lives) may have been taken out by another:
    /// it writes its share again.
    private func scheduleHeartbeat() {
        heartbeat = server.loop.schedule(afterMilliseconds: max(100, timeoutMilliseconds / 3)) { [unowned self] in
            client.send(["EVAL", ClusterScripts.beat, "0", node, String(keyMilliseconds)]) { [unowned self] result in
                guard case .success(.array(let answer?)) = result, let alive = answer.first else { return }
                let reaped = answer.dropFirst().compactMap(\.text)
                if !reaped.isEmpty {
                    logger.notice("nodes gone from the cluster", metadata: ["nodes": "\(reaped)"])
                }
                if alive == .integer(0) {
                    logger.warning("this node's heartbeat had expired: writing its rooms to Redis again")
                    sync()
                }
            }
            scheduleHeartbeat()
        }
    }
}
