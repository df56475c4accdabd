import HTTP
import Store

extension Server {
    /// One loop's share of `/metrics`: a copy of its counters and its connections by endpoint,
    /// taken on that loop.
    struct LoopFigures {
        let metrics: Metrics
        let connectionsByKind: [String: Int]
    }

    /// On the chat loop: asks every loop for its figures (in their next hand-offs) and answers
    /// with the sum once the last has come back.
    func metricsResponse(_ reply: @escaping (HTTPResponse) -> Void) {
        let gathering = Gathering(loops: peers.count)
        for peer in peers {
            post(to: peer.index) {
                let figures = peer.loopFigures()
                peer.onChatLoop { chatLoop in
                    gathering.parts.append(figures)
                    guard gathering.parts.count == gathering.loops else { return }
                    var response = HTTPResponse(status: .ok, body: Array(chatLoop.metricsText(gathering.parts).utf8))
                    response.headers.add("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                    reply(response)
                }
            }
        }
    }

    /// The figures of one `/metrics` answer as they come back from the loops.
    private final class Gathering {
        let loops: Int
        var parts: [LoopFigures] = []

        init(loops: Int) {
            self.loops = loops
        }
    }

    private func loopFigures() -> LoopFigures {
        var byKind = ["http": 0]
        for kind in EndpointKind.allCases { byKind[kind.rawValue] = 0 }
        for connection in connections {
            byKind[connection.session?.base.kind.rawValue ?? "http", default: 0] += 1
        }
        return LoopFigures(metrics: metrics.copy(), connectionsByKind: byKind)
    }

    /// The `/metrics` body: every loop's figures summed, the chat loop's gauges, and the
    /// store's disk figures.
    private func metricsText(_ parts: [LoopFigures]) -> String {
        var exposition = PrometheusText()
        let total = Metrics()
        var byKind: [String: Int] = [:]
        for part in parts {
            total.merge(part.metrics)
            byKind.merge(part.connectionsByKind, uniquingKeysWith: +)
        }
        exposition.add(.gauge,
            "switchboard_connections", "Open connections by endpoint (http: not upgraded).",
            labelled: byKind.sorted { $0.key < $1.key }.map { (labels: "{kind=\"\($0.key)\"}", value: $0.value) })
        exposition.add(.gauge, "switchboard_rooms", "Plain relay rooms with members.", rooms.directory?.roomCount ?? 0)
        if let service = chat?.service {
            exposition.add(.gauge, "switchboard_groups", "Chat groups stored.", service.state.groups.count)
            exposition.add(.gauge, "switchboard_online_users", "Users with at least one open /ws connection.", service.onlineUserCount)
            exposition.add(.gauge, "switchboard_messages_stored", "Chat messages stored.", service.state.messageCount)
        }
        exposition.add(.gauge, "switchboard_event_loops", "Event loop threads (the threads setting).", peers.count)
        if let cluster {
            exposition.add(.gauge, "switchboard_cluster_ready", "1 while this node reaches the cluster's Redis and is in sync.",
                           cluster.isReady ? 1 : 0)
            exposition.add(.counter, "switchboard_cluster_messages_published_total",
                           "Room messages of this node's members published to Redis.", cluster.publishedMessages)
            exposition.add(.counter, "switchboard_cluster_messages_unpublished_total",
                           "Room messages not published to Redis because it was unreachable.", cluster.unpublishedMessages)
            exposition.add(.counter, "switchboard_cluster_messages_received_total",
                           "Room messages of other nodes received from Redis.", cluster.receivedMessages)
        }
        if let clusterJournal {
            exposition.add(.gauge, "switchboard_cluster_journal_ready",
                           "1 while this node's chat history is in step with the cluster's journal and takes changes.",
                           clusterJournal.isReady ? 1 : 0)
            exposition.add(.counter, "switchboard_cluster_journal_entries_applied_total",
                           "Entries of other nodes read from the cluster's journal and applied.", clusterJournal.appliedEntries)
            exposition.add(.counter, "switchboard_cluster_journal_entries_placed_total",
                           "Entries of this node applied from Redis's answer to their append, before reading them back.",
                           clusterJournal.placedEntries)
            exposition.add(.counter, "switchboard_cluster_journal_appends_failed_total",
                           "Changes of this node that could not be written to the cluster's journal (answered unavailable).",
                           clusterJournal.failedAppends)
        }
        total.write(to: &exposition)
        var webhooks: [(name: String, statistics: Webhook.Statistics)] = []
        if let presenceWebhook { webhooks.append(("presence", presenceWebhook.statistics)) }
        if let offlineWebhook { webhooks.append(("offline", offlineWebhook.statistics)) }
        if !webhooks.isEmpty { Server.write(webhooks, to: &exposition) }
        if let statistics = store?.statistics { Server.write(statistics, to: &exposition) }
        return exposition.text
    }

    private static func write(_ webhooks: [(name: String, statistics: Webhook.Statistics)], to exposition: inout PrometheusText) {
        func samples(_ value: (Webhook.Statistics) -> Int) -> [(labels: String, value: Int)] {
            webhooks.map { (labels: "{webhook=\"\($0.name)\"}", value: value($0.statistics)) }
        }
        exposition.add(.counter, "switchboard_webhook_events_queued_total", "Events accepted into a webhook's queue.", labelled: samples(\.queued))
        exposition.add(.counter, "switchboard_webhook_events_delivered_total", "Events a webhook receiver acknowledged (2xx).", labelled: samples(\.delivered))
        exposition.add(.counter,
            "switchboard_webhook_events_dropped_total", "Events dropped because a webhook's queue was full.", labelled: samples(\.dropped))
        exposition.add(.counter,
            "switchboard_webhook_failed_attempts_total", "Webhook requests that failed and will be retried.", labelled: samples(\.failedAttempts))
        exposition.add(.gauge, "switchboard_webhook_events_waiting", "Events queued for a webhook, not yet sent.", labelled: samples(\.waiting))
    }

    private static func write(_ statistics: StoreStatistics, to exposition: inout PrometheusText) {
        exposition.add(.counter, "switchboard_store_fsyncs_total", "Journal fsyncs.", statistics.fsyncs)
        exposition.add(.counter, "switchboard_store_mutations_total", "Mutations made durable.", statistics.mutations)
        exposition.add(.counter,
            "switchboard_store_batches_held_back_total", "Journal batches held back because checkpoints fell behind the journal.",
            statistics.batchesHeldBack)
        exposition.add(.counter, "switchboard_store_failures_total", "Failed journal writes or compactions.", statistics.failures)
        exposition.add(.gauge, "switchboard_store_journal_bytes", "Bytes in the journal since the last snapshot.", statistics.journalBytes)
        exposition.add(.gauge, "switchboard_store_snapshot_bytes", "Bytes in the last snapshot.", statistics.snapshotBytes)
        exposition.histogram("switchboard_store_flush_seconds", "Time to write and fsync one journal batch.", statistics.flushLatency)
        exposition.histogram("switchboard_store_batch_mutations", "Mutations per fsync (group commit).", statistics.batchSize)
    }
}
