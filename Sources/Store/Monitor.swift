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
        pthread_cond_init(condition, nil)
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
