import Store

extension Server {
    /// The `/metrics` body: loop counters, gauges read now, and the store's disk figures.
    func metricsText() -> String {
        var byKind = ["http": 0]
        for kind in EndpointKind.allCases { byKind[kind.rawValue] = 0 }
        for connection in connections {
            byKind[connection.session?.base.kind.rawValue ?? "http", default: 0] += 1
        }
        var gauges = byKind.sorted { $0.key < $1.key }.map {
            Metrics.Gauge(name: "switchboard_connections", help: "Open connections by endpoint (http: not upgraded).",
                          labels: "{kind=\"\($0.key)\"}", value: $0.value)
        }
        gauges.append(.init(name: "switchboard_rooms", help: "Plain relay rooms with members.", value: rooms.rooms.roomCount))
        if let service = chat?.service {
            gauges.append(.init(name: "switchboard_groups", help: "Chat groups stored.", value: service.state.groups.count))
            gauges.append(.init(name: "switchboard_online_users", help: "Users with at least one open /ws connection.",
                                value: service.onlineUserCount))
            gauges.append(.init(name: "switchboard_messages_stored", help: "Chat messages stored.", value: service.state.messageCount))
        }
        return metrics.render(gauges: gauges, extra: store.map { Server.storeMetrics($0.statistics) } ?? "")
    }

    private static func storeMetrics(_ statistics: StoreStatistics) -> String {
        var text = ""
        func line(_ name: String, _ type: String, _ help: String, _ value: String) {
            text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n\(name) \(value)\n"
        }
        line("switchboard_store_fsyncs_total", "counter", "Journal fsyncs.", "\(statistics.fsyncs)")
        line("switchboard_store_mutations_total", "counter", "Mutations made durable.", "\(statistics.mutations)")
        line("switchboard_store_failures_total", "counter", "Failed journal writes or compactions.", "\(statistics.failures)")
        line("switchboard_store_journal_bytes", "gauge", "Bytes in the journal since the last snapshot.", "\(statistics.journalBytes)")
        line("switchboard_store_snapshot_bytes", "gauge", "Bytes in the last snapshot.", "\(statistics.snapshotBytes)")
        histogram(&text, "switchboard_store_flush_seconds", "Time to write and fsync one journal batch.", statistics.flushLatency)
        histogram(&text, "switchboard_store_batch_mutations", "Mutations per fsync (group commit).", statistics.batchSize)
        return text
    }

    private static func histogram(_ text: inout String, _ name: String, _ help: String, _ histogram: StoreStatistics.Histogram) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) histogram\n"
        var cumulative: UInt64 = 0
        for (index, bound) in histogram.upperBounds.enumerated() {
            cumulative += histogram.counts[index]
            text += "\(name)_bucket{le=\"\(bound)\"} \(cumulative)\n"
        }
        text += "\(name)_bucket{le=\"+Inf\"} \(histogram.count)\n\(name)_sum \(histogram.sum)\n\(name)_count \(histogram.count)\n"
    }
}
