import Foundation
import Glibc
import Posix

/// A `redis-server` of the test's own on 127.0.0.1, on a port that was free a moment before,
/// without persistence; stopped by `stop()`.
final class RedisProcess {
    let port: Int
    private let process = Process()

    /// A port nothing listens on now: bound with port 0, then released.
    static func freePort() throws -> Int {
        let probe = try Socket.listen(host: "127.0.0.1", port: 0)
        Socket.close(probe.fd)
        return probe.port
    }

    init(port: Int, arguments: [String] = []) throws {
        self.port = port
        process.executableURL = URL(fileURLWithPath: "/usr/bin/redis-server")
        process.arguments = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    /// Kills the server (SIGKILL: the test process may hand its children a signal mask that
    /// blocks SIGTERM, and a server without persistence has nothing to save).
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    deinit {
        stop()
    }
}
