import TLS

/// Certificate renewal without a restart: on SIGHUP the server reads its certificate and key
/// again (ACME clients renew every few weeks, and a restart would drop every WebSocket).
extension Server {
    /// Loads the configured certificate chain and key into a new TLS context and hands it to the
    /// TLS listener, so handshakes from now on use the new pair. Open connections carry on: each
    /// `TLSSession` holds the context it started with. A pair that does not load (missing file,
    /// not PEM, key not matching) is refused with a log line naming the reason, and the
    /// previous pair stays in use.
    ///
    /// Runs on the loop thread; reading two PEM files pauses the loop for about a millisecond.
    func reloadCertificate() {
        guard let certificate = configuration.tlsCertificatePath, let key = configuration.tlsKeyPath else {
            logger.notice("received SIGHUP: TLS is off, nothing to reload")
            return
        }
        let context: TLSContext
        do {
            context = try TLSContext(certificateChainPath: certificate, privateKeyPath: key)
        } catch {
            logger.error("received SIGHUP: TLS certificate refused, the previous one stays in use: \(error)")
            return
        }
        for listener in listeners where listener.tlsContext != nil {
            listener.tlsContext = context
        }
        logger.notice("received SIGHUP: TLS certificate reloaded", metadata: ["certificate": "\(certificate)"])
    }
}
