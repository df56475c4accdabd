import Bytes
import Chat

/// `GET /api/v1/presence/stream`: presence as Server-Sent Events, for operators.
///
/// A subscriber gets a `snapshot` event, then one `presence` event per folded change (a chat
/// group or a plain room: `PresenceChange.json`), and a comment line every `heartbeatMilliseconds`
/// (the `heartbeatInterval` setting, 15 s by default) so proxies and dead peers show themselves. Every event carries an id, `<epoch>-<sequence>`: the epoch
/// (the process's start time) tells this process's sequence numbers from an earlier one's. The
/// last `heldEvents` events are kept, so a subscriber that reconnects with `Last-Event-ID` gets
/// exactly what it missed when all of it is still held, and a fresh snapshot otherwise.
///
/// The body is chunked (RFC 9112 §7.1). An event is framed once and the same chunk is queued on
/// every subscriber, like a room message; a subscriber that stops reading is closed by its
/// connection's outbound limit like a slow WebSocket reader. Confined to the event loop thread.
final class PresenceStream {
    static let heldEvents = 1024

    let epoch: String
    let heartbeatMilliseconds: Int
    /// The sequence number of the latest event; the snapshot sent now reflects it.
    private(set) var lastSequence: UInt64 = 0
    /// The latest events by `sequence % heldEvents`.
    private var held: [ByteChunk?] = Array(repeating: nil, count: PresenceStream.heldEvents)
    private var subscribers: [ObjectIdentifier: Subscriber] = [:]
    /// The presence snapshot as JSON (`Server.presenceSnapshot()`).
    private let snapshot: () -> [UInt8]

    init(epoch: String, heartbeatMilliseconds: Int, snapshot: @escaping () -> [UInt8]) {
        self.epoch = epoch
        self.heartbeatMilliseconds = heartbeatMilliseconds
        self.snapshot = snapshot
    }

    /// Sends `change` to every subscriber and keeps it for those that reconnect.
    func publish(_ change: PresenceChange) {
        lastSequence += 1
        let chunk = Self.chunk(event("presence", change.json))
        held[Int(lastSequence % UInt64(Self.heldEvents))] = chunk
        for subscriber in subscribers.values { subscriber.connection.send(chunk) }
    }

    /// The comment line that keeps idle streams alive.
    func heartbeat() {
        guard !subscribers.isEmpty else { return }
        let chunk = Self.chunk(Array(": heartbeat\n\n".utf8))
        for subscriber in subscribers.values { subscriber.connection.send(chunk) }
    }

    /// The held events after `lastEventID`, or nil when it is not this process's or some of
    /// what came after it is no longer held.
    func missed(after lastEventID: String) -> [ByteChunk]? {
        guard let dash = lastEventID.lastIndex(of: "-"), lastEventID[..<dash] == epoch,
              let sequence = UInt64(lastEventID[lastEventID.index(after: dash)...]), sequence <= lastSequence,
              lastSequence - sequence <= UInt64(Self.heldEvents)
        else { return nil }
        var events: [ByteChunk] = []
        var next = sequence + 1
        while next <= lastSequence {
            guard let chunk = held[Int(next % UInt64(Self.heldEvents))] else { return nil }
            events.append(chunk)
            next += 1
        }
        return events
    }

    /// `id: <epoch>-<sequence>`, `event: <name>`, `data: <json>` and the blank line that ends
    /// an event. The JSON writers never emit a line break, so one `data` line holds it all.
    private func event(_ name: String, _ json: [UInt8]) -> [UInt8] {
        var bytes = Array("id: \(epoch)-\(lastSequence)\nevent: \(name)\ndata: ".utf8)
        bytes.append(contentsOf: json)
        bytes.append(contentsOf: "\n\n".utf8)
        return bytes
    }

    /// `bytes` as one chunk of a chunked body: its length in hex, CR LF, the bytes, CR LF.
    static func chunk(_ bytes: [UInt8]) -> ByteChunk {
        var framed = Array(String(bytes.count, radix: 16).utf8)
        framed.append(contentsOf: [ASCII.carriageReturn, ASCII.lineFeed])
        framed.append(contentsOf: bytes)
        framed.append(contentsOf: [ASCII.carriageReturn, ASCII.lineFeed])
        return ByteChunk(framed)
    }

    /// One stream's connection.
    final class Subscriber: EndpointSession {
        unowned let connection: Connection
        unowned let stream: PresenceStream
        /// Where the client says it stopped (`Last-Event-ID`), if it is resuming.
        let lastEventID: String?

        init(_ connection: Connection, stream: PresenceStream, lastEventID: String?) {
            self.connection = connection
            self.stream = stream
            self.lastEventID = lastEventID
        }

        var kind: EndpointKind { .stream }

        /// Starts with a reconnection delay for `EventSource`, then what was missed or a snapshot.
        func opened() {
            stream.subscribers[ObjectIdentifier(self)] = self
            connection.send(PresenceStream.chunk(Array("retry: 1000\n\n".utf8)))
            if let lastEventID, let missed = stream.missed(after: lastEventID) {
                for chunk in missed { connection.send(chunk) }
            } else {
                connection.send(PresenceStream.chunk(stream.event("snapshot", stream.snapshot())))
            }
        }

        func closed() {
            stream.subscribers.removeValue(forKey: ObjectIdentifier(self))
        }
    }
}
