import Redis

/// Every node's view of who is in the cluster's `/rooms` rooms, for the presence API, stream
/// and webhook: the same `RoomPresence` a single node keeps, fed by Redis instead of by this
/// node's joins and leaves.
///
/// Each connection that joins or leaves anywhere is a numbered event on `switchboard:presence`
/// (ClusterScripts). After each (re)subscription to it, the view is brought to a snapshot of
/// Redis (`ClusterScripts.snapshot`, with the number of the last event it includes) and the
/// events that came meanwhile and are newer are applied on top, so nothing is missed or
/// counted twice across a reconnect. The changes between the old view and the snapshot go
/// through `RoomPresence` like any others, so the stream sees them as diffs: the members of a
/// node that died leave, those of a node that came meanwhile join. Confined to the chat loop.
///
/// The chat groups' presence comes on the same events, as rooms named `chat:<group id>`
/// (ClusterScripts): those of other nodes go to the chat service (`chatChanged`,
/// `chatSnapshot`), not into the rooms' view.
final class ClusterPresence {
    private struct Event {
        var seq: Int
        var room: String
        var joined: Bool
        var name: String
        var node: String
    }

    static let chatPrefix = "chat:"

    let view = RoomPresence()
    /// This node: its own chat presence is not another node's.
    let node: String
    /// A user came online (true) or went (false) in a chat group on another node: group, user.
    var chatChanged: (String, String, Bool) -> Void = { _, _, _ in }
    /// After a snapshot: the users online in each chat group on other nodes, with on how many.
    var chatSnapshot: ([String: [String: Int]]) -> Void = { _ in }
    /// Events waiting for the snapshot they follow; nil once the view is live.
    private var buffered: [Event]? = []
    private var lastSeq = 0

    /// Events kept while a snapshot is awaited; past it the oldest half goes (the snapshot,
    /// asked for after them, includes them).
    static let maxBuffered = 100_000

    var awaitsSnapshot: Bool { buffered != nil }

    init(node: String) {
        self.node = node
    }

    /// The subscription is (re)made: events are kept until the next snapshot.
    func resync() {
        if buffered == nil { buffered = [] }
    }

    /// An event from `switchboard:presence`: `seq\nroom\ndelta\nname\nnode`.
    func received(_ payload: [UInt8]) {
        let parts = payload.split(separator: 10, maxSplits: 4, omittingEmptySubsequences: false)
        guard parts.count == 5, let seq = Int(String(decoding: parts[0], as: UTF8.self)) else { return }
        let event = Event(seq: seq, room: String(decoding: parts[1], as: UTF8.self),
                          joined: parts[2].first != UInt8(ascii: "-"), name: String(decoding: parts[3], as: UTF8.self),
                          node: String(decoding: parts[4], as: UTF8.self))
        if buffered != nil {
            buffered!.append(event)
            if buffered!.count > ClusterPresence.maxBuffered { buffered!.removeFirst(ClusterPresence.maxBuffered / 2) }
        } else if seq > lastSeq {
            apply(event)
        }
    }

    /// The snapshot script's answer: the view becomes it, then the newer buffered events apply.
    /// A snapshot that comes while the view is live (a second one asked for meanwhile) is
    /// dropped: the events already cover it.
    func snapshot(_ answer: RESPValue) {
        guard let events = buffered, case .array(let parts?) = answer, let seqText = parts.first?.text,
              let seq = Int(seqText) else { return }
        var target: [String: [String: Int]] = [:]
        var chat: [String: [String: Int]] = [:]
        var index = 1
        while index + 1 < parts.count {
            guard let room = parts[index].text, case .array(let fields?) = parts[index + 1] else { break }
            var field = 0
            while field + 1 < fields.count {
                if let key = fields[field].bytes, let newline = key.firstIndex(of: 10),
                   let count = fields[field + 1].text.flatMap(Int.init) {
                    let name = String(decoding: key[(newline + 1)...], as: UTF8.self)
                    if !room.hasPrefix(Self.chatPrefix) {
                        target[room, default: [:]][name, default: 0] += count
                    } else if !key[..<newline].elementsEqual(node.utf8) {
                        chat[String(room.dropFirst(Self.chatPrefix.count)), default: [:]][name, default: 0] += 1
                    }
                }
                field += 2
            }
            index += 2
        }
        chatSnapshot(chat)
        var current: [String: [String: Int]] = [:]
        for (room, name, connections) in view.counts { current[room, default: [:]][name] = connections }
        for room in Set(target.keys).union(current.keys).sorted() {
            let want = target[room] ?? [:]
            let have = current[room] ?? [:]
            for name in Set(want.keys).union(have.keys).sorted() {
                let difference = (want[name] ?? 0) - (have[name] ?? 0)
                for _ in 0..<abs(difference) {
                    if difference > 0 { view.joined(room, name) } else { view.left(room, name) }
                }
            }
        }
        lastSeq = seq
        buffered = nil
        for event in events where event.seq > lastSeq { apply(event) }
    }

    private func apply(_ event: Event) {
        lastSeq = event.seq
        if event.room.hasPrefix(Self.chatPrefix) {
            if event.node != node { chatChanged(String(event.room.dropFirst(Self.chatPrefix.count)), event.name, event.joined) }
        } else if event.joined {
            view.joined(event.room, event.name)
        } else {
            view.left(event.room, event.name)
        }
    }
}
