import Glibc

/// The process's clocks: monotonic time for deadlines, rates and latencies (it never jumps
/// with the wall clock), wall time for the timestamps clients and files see, and the calling
/// thread's CPU time for what a piece of background work cost.
public enum SystemClock {
    /// Nanoseconds on `CLOCK_MONOTONIC`.
    public static func monotonicNanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// Milliseconds since the epoch on `CLOCK_REALTIME`.
    public static func epochMilliseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }

    /// Nanoseconds of CPU the calling thread has used (`CLOCK_THREAD_CPUTIME_ID`).
    public static func threadCPUNanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }
}
