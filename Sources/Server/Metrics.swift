import WebSocket

/// The loop's counters for `/metrics`.
///
/// Plain integers bumped on the loop thread: no atomics on the per-message path.
final class Metrics {
    var messagesIn = 0
    var messagesOut = 0
    var bytesIn = 0
    var bytesOut = 0
    var slowConsumers = 0
    var httpErrors = 0
    private(set) var closesByCode: [UInt16: Int] = [:]

    func countClose(_ code: CloseCode) {
        closesByCode[code.rawValue, default: 0] += 1
    }

    /// Writes the counters.
    func write(to exposition: inout PrometheusText) {
        exposition.add(.counter, "switchboard_messages_in_total", "WebSocket messages received.", messagesIn)
        exposition.add(.counter, "switchboard_messages_out_total", "WebSocket messages queued to clients.", messagesOut)
        exposition.add(.counter, "switchboard_bytes_in_total", "Bytes read from sockets.", bytesIn)
        exposition.add(.counter, "switchboard_bytes_out_total", "Bytes written to sockets.", bytesOut)
        exposition.add(.counter, 
            "switchboard_slow_consumers_dropped_total", "Connections closed because their outbound queue was full.",
            slowConsumers)
        exposition.add(.counter, "switchboard_http_errors_total", "Malformed or refused HTTP requests.", httpErrors)
        exposition.add(.counter, 
            "switchboard_protocol_errors_total", "WebSocket connections failed, by close code.",
            labelled: closesByCode.sorted { $0.key < $1.key }.map { (labels: "{code=\"\($0.key)\"}", value: $0.value) })
    }
}
