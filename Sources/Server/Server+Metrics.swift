import Store

extension Server {
    /// The `/metrics` body: gauges read now, the loop's counters, and the store's disk figures.
    func metricsText() -> String {
        var exposition = PrometheusText()
        var byKind = ["http": 0]
        for kind in EndpointKind.allCases { byKind[kind.rawValue] = 0 }
        for connection in connections {
            byKind[connection.session?.base.kind.rawValue ?? "http", default: 0] += 1
        }
        exposition.add(.gauge, 
            "switchboard_connections", "Open connections by endpoint (http: not upgraded).",
            labelled: byKind.sorted { $0.key < $1.key }.map { (labels: "{kind=\"\($0.key)\"}", value: $0.value) })
        exposition.add(.gauge, "switchboard_rooms", "Plain relay rooms with members.", rooms.rooms.roomCount)
        if let service = chat?.service {
            exposition.add(.gauge, "switchboard_groups", "Chat groups stored.", service.state.groups.count)
            exposition.add(.gauge, "switchboard_online_users", "Users with at least one open /ws connection.", service.onlineUserCount)
            exposition.add(.gauge, "switchboard_messages_stored", "Chat messages stored.", service.state.messageCount)
        }
        metrics.write(to: &exposition)
        if let statistics = store?.statistics { Server.write(statistics, to: &exposition) }
        return exposition.text
    }

    private static func write(_ statistics: StoreStatistics, to exposition: inout PrometheusText) {
        exposition.add(.counter, "switchboard_store_fsyncs_total", "Journal fsyncs.", statistics.fsyncs)
        exposition.add(.counter, "switchboard_store_mutations_total", "Mutations made durable.", statistics.mutations)
        exposition.add(.counter, "switchboard_store_failures_total", "Failed journal writes or compactions.", statistics.failures)
        exposition.add(.gauge, "switchboard_store_journal_bytes", "Bytes in the journal since the last snapshot.", statistics.journalBytes)
        exposition.add(.gauge, "switchboard_store_snapshot_bytes", "Bytes in the last snapshot.", statistics.snapshotBytes)
        exposition.histogram("switchboard_store_flush_seconds", "Time to write and fsync one journal batch.", statistics.flushLatency)
        exposition.histogram("switchboard_store_batch_mutations", "Mutations per fsync (group commit).", statistics.batchSize)
    }
}
