import CLinux
import Glibc

/// A thread of its own for one event loop: started with a body, joined once it returns.
///
/// The server runs one loop per thread (`threads`); the first loop runs on the main thread and
/// starts the others with this. POSIX threads rather than Foundation's `Thread`, so the Posix
/// target stays free of Foundation, and joinable, so shutdown can wait for every loop to finish
/// closing its connections before the store is closed.
public final class LoopThread {
    private var thread: pthread_t
    private var joined = false

    /// The cores this process may run on (its CPU affinity: `taskset`, a container's cpuset),
    /// at least 1. Not the machine's core count, which overstates what a pinned process gets.
    public static var availableCores: Int {
        max(1, Int(CLinux_available_cores()))
    }

    /// Starts a thread that runs `body` and ends when it returns.
    public init(_ body: @escaping @Sendable () -> Void) throws(PosixError) {
        let box = Unmanaged.passRetained(Body(body))
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { context in
            let body = Unmanaged<Body>.fromOpaque(context!).takeRetainedValue()
            body.run()
            return nil
        }, box.toOpaque())
        guard result == 0 else {
            box.release()
            throw PosixError(call: "pthread_create", errno: result)
        }
        self.thread = thread
    }

    /// Names the calling thread (up to 15 bytes), so `top -H`, `perf` and `/proc/PID/task` tell
    /// the server's threads apart.
    public static func nameCurrentThread(_ name: String) {
        _ = CLinux_set_thread_name(name)
    }

    /// Waits until the thread's body has returned.
    public func join() {
        guard !joined else { return }
        joined = true
        pthread_join(thread, nil)
    }

    /// The body, carried through `pthread_create`'s untyped argument.
    private final class Body {
        let run: @Sendable () -> Void

        init(_ run: @escaping @Sendable () -> Void) {
            self.run = run
        }
    }
}
