/// A per-connection token bucket: `rate` requests a second, bursts of twice that.
///
/// A request over the limit is answered with `rate_limited`; a connection that keeps sending
/// regardless (three times the rate within one second) is closed, because it is not a client
/// that reads its error replies.
struct RateLimiter {
    enum Verdict {
        case allow
        case reject
        case close
    }

    private let rate: Double
    private let burst: Double
    private var tokens: Double
    private var lastRefill: UInt64
    /// Requests seen in the current one-second window, accepted or not.
    private var windowStart: UInt64
    private var windowCount = 0

    init(rate: Int, now: UInt64) {
        self.rate = Double(max(1, rate))
        self.burst = 2 * Double(max(1, rate))
        self.tokens = burst
        self.lastRefill = now
        self.windowStart = now
    }

    mutating func admit(now: UInt64) -> Verdict {
        if now >= windowStart &+ 1_000_000_000 {
            windowStart = now
            windowCount = 0
        }
        windowCount += 1
        if Double(windowCount) > 3 * rate { return .close }
        let elapsed = Double(now &- lastRefill) / 1e9
        lastRefill = now
        tokens = min(burst, tokens + elapsed * rate)
        guard tokens >= 1 else { return .reject }
        tokens -= 1
        return .allow
    }
}
