import WebSocket

/// Counters for `/metrics`, in the Prometheus text format.
///
/// Plain integers bumped on the loop thread: no atomics on the per-message path.
final class Metrics {
    var messagesIn = 0
    var messagesOut = 0
    var bytesIn = 0
    var bytesOut = 0
    var slowConsumers = 0
    var httpErrors = 0
    /// Sockets closed at accept: over `maxConnections` or `maxConnectionsPerAddress`.
    var refusedConnections = 0
    /// `/rooms` messages dropped because their sender was over its publishing rate.
    var droppedPublishes = 0
    private(set) var closesByCode: [UInt16: Int] = [:]

    func countClose(_ code: CloseCode) {
        closesByCode[code.rawValue, default: 0] += 1
    }

    /// A gauge read at scrape time; samples of one metric must be adjacent.
    struct Gauge {
        let name: String
        let help: String
        var labels = ""
        let value: Int
    }

    /// The exposition text: the gauges, these counters, and `extra` (already formatted).
    func render(gauges: [Gauge], extra: String) -> String {
        var text = ""
        func counter(_ name: String, _ help: String, _ value: Int) {
            text += "# HELP \(name) \(help)\n# TYPE \(name) counter\n\(name) \(value)\n"
        }
        var lastGauge = ""
        for gauge in gauges {
            if gauge.name != lastGauge {
                text += "# HELP \(gauge.name) \(gauge.help)\n# TYPE \(gauge.name) gauge\n"
                lastGauge = gauge.name
            }
            text += "\(gauge.name)\(gauge.labels) \(gauge.value)\n"
        }
        counter("switchboard_messages_in_total", "WebSocket messages received.", messagesIn)
        counter("switchboard_messages_out_total", "WebSocket messages queued to clients.", messagesOut)
        counter("switchboard_bytes_in_total", "Bytes read from sockets.", bytesIn)
        counter("switchboard_bytes_out_total", "Bytes written to sockets.", bytesOut)
        counter("switchboard_slow_consumers_dropped_total", "Connections closed because their outbound queue was full.", slowConsumers)
        counter("switchboard_http_errors_total", "Malformed or refused HTTP requests.", httpErrors)
        counter("switchboard_dropped_publishes_total", "Room messages dropped because the sender was over its rate.", droppedPublishes)
        counter("switchboard_refused_connections_total", "Connections closed at accept by a connection limit.", refusedConnections)
        text += "# HELP switchboard_protocol_errors_total WebSocket connections failed, by close code.\n"
        text += "# TYPE switchboard_protocol_errors_total counter\n"
        for (code, count) in closesByCode.sorted(by: { $0.key < $1.key }) {
            text += "switchboard_protocol_errors_total{code=\"\(code)\"} \(count)\n"
        }
        return text + extra
    }
}
