import Store
import WebSocket

/// One loop's counters for `/metrics`.
///
/// Plain integers bumped on the loop thread: no atomics on the per-message path. Each loop has
/// its own; `/metrics` adds up copies taken on each loop (`Server.metricsResponse`).
final class Metrics {
    /// Messages read from clients, and queued to them, per endpoint.
    var messagesReceived = PerEndpoint()
    var messagesSent = PerEndpoint()
    var bytesIn = 0
    var bytesOut = 0
    var slowConsumers = 0
    var httpErrors = 0
    /// From a message's arrival (loop time) to the write that carries it to a recipient; one
    /// observation per message and recipient (Connection.deliver(_:arrivedAt:)).
    var deliveryLatency = StoreStatistics.Histogram(
        upperBounds: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5])
    /// Sockets closed at accept: over `maxConnections` or `maxConnectionsPerAddress`.
    var refusedConnections = 0
    /// `/rooms` messages dropped because their sender was over its publishing rate.
    var droppedPublishes = 0
    private(set) var closesByCode: [UInt16: Int] = [:]

    func countClose(_ code: CloseCode) {
        closesByCode[code.rawValue, default: 0] += 1
    }

    /// Adds `other`'s counts: `/metrics` sums every loop's counters (each loop bumps its own,
    /// and hands a copy over when asked, so no counter is shared between threads).
    func merge(_ other: Metrics) {
        for kind in EndpointKind.allCases {
            messagesReceived[kind] += other.messagesReceived[kind]
            messagesSent[kind] += other.messagesSent[kind]
        }
        bytesIn += other.bytesIn
        bytesOut += other.bytesOut
        slowConsumers += other.slowConsumers
        httpErrors += other.httpErrors
        deliveryLatency.merge(other.deliveryLatency)
        refusedConnections += other.refusedConnections
        droppedPublishes += other.droppedPublishes
        for (code, count) in other.closesByCode { closesByCode[code, default: 0] += count }
    }

    /// A copy of the counters as they are now, for another loop to read.
    func copy() -> Metrics {
        let copy = Metrics()
        copy.merge(self)
        return copy
    }

    /// One counter per endpoint: four stored integers, not an array, so that bumping one is
    /// a plain add with no buffer to check for sharing (and no exclusivity check at run time:
    /// docs/architecture.md, "Exclusivity checks on the message path").
    struct PerEndpoint {
        private var echo = 0
        private var room = 0
        private var chat = 0
        private var stream = 0

        subscript(kind: EndpointKind) -> Int {
            get {
                switch kind {
                case .echo: echo
                case .room: room
                case .chat: chat
                case .stream: stream
                }
            }
            set {
                switch kind {
                case .echo: echo = newValue
                case .room: room = newValue
                case .chat: chat = newValue
                case .stream: stream = newValue
                }
            }
        }

        /// `{endpoint="..."}` samples for every endpoint that carries messages.
        var samples: [(labels: String, value: Int)] {
            EndpointKind.allCases.filter { $0 != .stream }.map { (labels: "{endpoint=\"\($0.rawValue)\"}", value: self[$0]) }
        }
    }

    /// Writes the counters.
    func write(to exposition: inout PrometheusText) {
        exposition.add(.counter,
            "switchboard_messages_received_total", "WebSocket messages received, by endpoint.",
            labelled: messagesReceived.samples)
        exposition.add(.counter,
            "switchboard_messages_sent_total", "WebSocket messages queued to clients, by endpoint.",
            labelled: messagesSent.samples)
        exposition.add(.counter, "switchboard_received_bytes_total", "Bytes read from sockets.", bytesIn)
        exposition.add(.counter, "switchboard_sent_bytes_total", "Bytes written to sockets.", bytesOut)
        exposition.add(.counter,
            "switchboard_slow_consumers_dropped_total", "Connections closed because their outbound queue was full.",
            slowConsumers)
        exposition.add(.counter, "switchboard_http_errors_total", "Malformed or refused HTTP requests.", httpErrors)
        exposition.add(.counter,
            "switchboard_dropped_publishes_total", "Room messages dropped because the sender was over its rate.",
            droppedPublishes)
        exposition.add(.counter,
            "switchboard_refused_connections_total", "Connections closed at accept by a connection limit.",
            refusedConnections)
        exposition.add(.counter,
            "switchboard_protocol_errors_total", "WebSocket connections failed, by close code.",
            labelled: closesByCode.sorted { $0.key < $1.key }.map { (labels: "{code=\"\($0.key)\"}", value: $0.value) })
        exposition.histogram(
            "switchboard_delivery_latency_seconds",
            "From a message's arrival to the socket write that carries it, per recipient.", deliveryLatency)
    }
}
