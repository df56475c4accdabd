import Store

/// The Prometheus text exposition format (version 0.0.4), written one metric family at a time:
/// the `# HELP` and `# TYPE` lines, then the family's samples, which must be adjacent.
///
/// The one writer behind `/metrics`; a scrape builds one and takes its `text`.
struct PrometheusText {
    private(set) var text = ""

    enum Kind: String {
        case counter, gauge
    }

    /// A counter or gauge with one sample.
    mutating func add(_ kind: Kind, _ name: String, _ help: String, _ value: some BinaryInteger) {
        add(kind, name, help, labelled: [(labels: "", value: Int(value))])
    }

    /// A counter or gauge with one sample per label set, e.g. `{code="1002"}`.
    mutating func add(_ kind: Kind, _ name: String, _ help: String, labelled samples: [(labels: String, value: Int)]) {
        family(name, kind.rawValue, help)
        for sample in samples { text += "\(name)\(sample.labels) \(sample.value)\n" }
    }

    /// A histogram: cumulative `_bucket` samples, then `_sum` and `_count`.
    mutating func histogram(_ name: String, _ help: String, _ histogram: StoreStatistics.Histogram) {
        family(name, "histogram", help)
        var cumulative: UInt64 = 0
        for (index, bound) in histogram.upperBounds.enumerated() {
            cumulative += histogram.counts[index]
            text += "\(name)_bucket{le=\"\(bound)\"} \(cumulative)\n"
        }
        text += "\(name)_bucket{le=\"+Inf\"} \(histogram.count)\n\(name)_sum \(histogram.sum)\n\(name)_count \(histogram.count)\n"
    }

    private mutating func family(_ name: String, _ type: String, _ help: String) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
    }
}
