#if canImport(Glibc)
import Glibc
#endif

/// A pthread mutex with one condition variable: the store's queue lock and its wakeup.
///
/// The mutex and condition live in heap memory of their own because pthread objects must not
/// move, which Swift does not promise for stored properties.
final class Monitor: @unchecked Sendable {
    // @unchecked: the pthread objects are the synchronization; the pointers never change.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        pthread_mutex_init(mutex, nil)
        // Timed waits count on the monotonic clock, like SystemClock.monotonicNanoseconds.
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func lock() {
        pthread_mutex_lock(mutex)
    }

    func unlock() {
        pthread_mutex_unlock(mutex)
    }

    /// Waits for `signal`; the caller holds the lock and re-checks its condition afterwards,
    /// since wakeups may be spurious.
    func wait() {
        pthread_cond_wait(condition, mutex)
    }

    /// Waits for `signal` or until the monotonic clock reads `deadline` (nanoseconds); the
    /// caller holds the lock and re-checks its condition and the clock afterwards.
    func wait(untilNanoseconds deadline: UInt64) {
        var time = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        pthread_cond_timedwait(condition, mutex, &time)
    }

    func signal() {
        pthread_cond_signal(condition)
    }

    func broadcast() {
        pthread_cond_broadcast(condition)
    }

    /// Runs `body` with the lock held.
    @inline(__always)
    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}
