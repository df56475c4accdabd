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

        /// The tokens the bucket holds at `now`.
        func available(at now: UInt64, rate: Double, burst: Double) -> Double {
            min(burst, tokens + Double(now &- lastRefill) / 1e9 * rate)
        }

        /// Refills the bucket up to `now` and takes a token if it has one.
        mutating func take(now: UInt64, rate: Double, burst: Double) -> Bool {
            tokens = available(at: now, rate: rate, burst: burst)
            lastRefill = now
            guard tokens >= 1 else { return false }
            tokens -= 1
            return true
        }
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
        let (rate, burst) = (rate, burst)
        // One hash of the key: the bucket is found (or made) and changed in place.
        let admitted = buckets[key, default: Bucket(tokens: burst, lastRefill: now)].take(now: now, rate: rate, burst: burst)
        if buckets.count >= sweepAt { sweep(now: now) }
        return admitted
    }

    /// Gives back the token `admit` took for `key`, for work the server then refused for reasons
    /// of its own (its password workers busy), which the client is told to try again.
    mutating func refund(_ key: String) {
        guard var bucket = buckets[key] else { return }
        bucket.tokens = min(burst, bucket.tokens + 1)
        buckets[key] = bucket
    }

    /// Seconds until `key` has a token again (0 when it has one now).
    func secondsUntilToken(_ key: String, now: UInt64) -> Int {
        guard let bucket = buckets[key] else { return 0 }
        let tokens = bucket.available(at: now, rate: rate, burst: burst)
        return tokens >= 1 ? 0 : Int(((1 - tokens) / rate).rounded(.up))
    }

    /// How many keys are tracked.
    var count: Int { buckets.count }

    private mutating func sweep(now: UInt64) {
        let (rate, burst) = (rate, burst)
        buckets = buckets.filter { $0.value.available(at: now, rate: rate, burst: burst) < burst }
        sweepAt = max(1024, 2 * buckets.count)
    }
}
