/// Token buckets by key (a client address, a user id): `rate` tokens a second up to `burst`.
///
/// For limits that span connections, such as signups per address or messages per user. A key
/// whose bucket has refilled is indistinguishable from an unknown one, so such entries are
/// dropped whenever the table has doubled since the last sweep: memory follows the keys that
/// are active, not every key ever seen.
struct KeyedRateLimiter {
    private struct Bucket {
        var tokens: Double
        var lastRefill: UInt64
    }

    let rate: Double
    let burst: Double
    private var buckets: [String: Bucket] = [:]
    private var sweepAt = 1024

    /// - Parameters:
    ///   - rate: tokens added per second.
    ///   - burst: the most tokens a key can hold (and starts with).
    init(rate: Double, burst: Double) {
        self.rate = max(rate, 1e-9)
        self.burst = max(burst, 1)
    }

    /// Takes a token for `key`; false when its bucket is empty.
    mutating func admit(_ key: String, now: UInt64) -> Bool {
        var bucket = buckets[key] ?? Bucket(tokens: burst, lastRefill: now)
        bucket.tokens = refilled(bucket, now: now)
        bucket.lastRefill = now
        let admitted = bucket.tokens >= 1
        if admitted { bucket.tokens -= 1 }
        buckets[key] = bucket
        if buckets.count >= sweepAt { sweep(now: now) }
        return admitted
    }

    /// Seconds until `key` has a token again (0 when it has one now).
    func secondsUntilToken(_ key: String, now: UInt64) -> Int {
        guard let bucket = buckets[key] else { return 0 }
        let tokens = refilled(bucket, now: now)
        return tokens >= 1 ? 0 : Int(((1 - tokens) / rate).rounded(.up))
    }

    /// How many keys are tracked.
    var count: Int { buckets.count }

    private func refilled(_ bucket: Bucket, now: UInt64) -> Double {
        min(burst, bucket.tokens + Double(now &- bucket.lastRefill) / 1e9 * rate)
    }

    private mutating func sweep(now: UInt64) {
        buckets = buckets.filter { refilled($0.value, now: now) < burst }
        sweepAt = max(1024, 2 * buckets.count)
    }
}
