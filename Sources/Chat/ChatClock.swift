import Posix

/// The two clocks the service reads: wall time for timestamps and expiries, monotonic time for
/// rate limits. Injected so tests can run at a chosen time without waiting.
public struct ChatClock: Sendable {
    /// Milliseconds since the epoch.
    public var milliseconds: @Sendable () -> Int64
    /// A monotonic count of nanoseconds (never jumps with the wall clock).
    public var monotonicNanoseconds: @Sendable () -> UInt64

    public init(milliseconds: @escaping @Sendable () -> Int64, monotonicNanoseconds: @escaping @Sendable () -> UInt64) {
        self.milliseconds = milliseconds
        self.monotonicNanoseconds = monotonicNanoseconds
    }

    /// The system's `CLOCK_REALTIME` and `CLOCK_MONOTONIC`.
    public static let system = ChatClock(
        milliseconds: SystemClock.epochMilliseconds, monotonicNanoseconds: SystemClock.monotonicNanoseconds)

    /// Seconds since the epoch, the unit of token expiry.
    var seconds: Int64 { milliseconds() / 1000 }
}
