import Glibc

/// Milliseconds and nanoseconds from CLOCK_MONOTONIC: for deadlines, never for wall time.
public enum MonotonicClock {
    public static func nanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }
}

/// Wall-clock time in milliseconds since the epoch, for timestamps that clients see.
public enum WallClock {
    public static func milliseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }
}
