import Logging
import Glibc
import Posix
import TLS

/// A listening socket: accepts connections and hands them to the server.
///
/// Confined to the event loop thread.
final class Listener: EventHandler {
    let fd: Int32
    let port: Int
    /// The context new TLS sessions start from; replaced when the certificate is reloaded
    /// (each session keeps the one it started with).
    var tlsContext: TLSContext?
    unowned let server: Server

    init(fd: Int32, port: Int, tlsContext: TLSContext?, server: Server) {
        self.fd = fd
        self.port = port
        self.tlsContext = tlsContext
        self.server = server
    }

    func readable(hangup: Bool) {
        while true {
            do {
                guard let client = try Socket.accept(fd) else { return }
                server.accepted(client, tls: tlsContext)
            } catch let error where error.errno == EMFILE || error.errno == ENFILE {
                // Out of descriptors: the pending connections stay in the backlog, and edge
                // triggering would not report them again, so the server resumes this listener
                // when a descriptor frees.
                server.pauseAccepting(self)
                return
            } catch {
                server.logger.debug("accept failed", metadata: ["error": "\(error)"])
                return
            }
        }
    }

    func writable() {}
}
