/// A `/rooms` connection's publishing rate: token buckets for messages and bytes a second,
/// each with bursts of twice its rate, like `/ws`'s per-connection limit.
///
/// A message over either bucket is dropped (the sender hears why once a second); a sender
/// that goes on regardless, with three times the message or byte rate within one second, is
/// not reading its notices and is closed. Pure: time comes in as an argument.
struct PublishRate {
    enum Verdict: Equatable {
        case allow
        /// Drop the message; `notify` is true for the first drop of a one-second window.
        case drop(notify: Bool)
        case close
    }

    private let messageRate: Double
    private let byteRate: Double
    private var messageTokens: Double
    private var byteTokens: Double
    private var lastRefill: UInt64
    /// Messages and bytes seen in the current one-second window, dropped or not.
    private var windowStart: UInt64
    private var windowMessages = 0
    private var windowBytes = 0
    private var notifiedInWindow = false

    init(messagesPerSecond: Int, bytesPerSecond: Int, now: UInt64) {
        messageRate = Double(max(1, messagesPerSecond))
        byteRate = Double(max(1, bytesPerSecond))
        messageTokens = 2 * messageRate
        byteTokens = 2 * byteRate
        lastRefill = now
        windowStart = now
    }

    mutating func admit(bytes: Int, now: UInt64) -> Verdict {
        if now >= windowStart &+ 1_000_000_000 {
            windowStart = now
            windowMessages = 0
            windowBytes = 0
            notifiedInWindow = false
        }
        windowMessages += 1
        windowBytes += bytes
        if Double(windowMessages) > 3 * messageRate || Double(windowBytes) > 3 * byteRate { return .close }
        let elapsed = Double(now &- lastRefill) / 1e9
        lastRefill = now
        messageTokens = min(2 * messageRate, messageTokens + elapsed * messageRate)
        byteTokens = min(2 * byteRate, byteTokens + elapsed * byteRate)
        guard messageTokens >= 1, byteTokens >= Double(bytes) else {
            let notify = !notifiedInWindow
            notifiedInWindow = true
            return .drop(notify: notify)
        }
        messageTokens -= 1
        byteTokens -= Double(bytes)
        return .allow
    }
}
