import Store
import WebSocket

/// The loop's counters for `/metrics`.
///
/// Plain integers bumped on the loop thread: no atomics on the per-message path.
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

    /// One counter per endpoint, indexed by the endpoint's kind without hashing.
    struct PerEndpoint {
        private var counts = [Int](repeating: 0, count: EndpointKind.allCases.count)

        subscript(kind: EndpointKind) -> Int {
            get { counts[kind.index] }
            set { counts[kind.index] = newValue }
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

extension EndpointKind {
    /// The kind's place in `allCases`.
    var index: Int {
        switch self {
        case .echo: 0
        case .room: 1
        case .chat: 2
        case .stream: 3
        }
    }
}
