import COpenSSL

/// A TLS failure, printed as one human sentence that names the file (when one is involved) and
/// carries OpenSSL's own reason strings.
///
/// Configuration errors (`certificateChain`, `privateKey`, `keyMismatch`, `configuration`) stop
/// the server's start; session errors (`notTLS`, `handshake`, `renegotiation`, `protocol`,
/// `closed`) end one connection. After a session error, `TLSSession.takeOutput()` may still hold
/// an alert worth writing before the socket is closed.
public struct TLSError: Error, CustomStringConvertible, Sendable {
    /// What went wrong, so callers can pick a log level or a reply without parsing text.
    public enum Kind: Sendable, Equatable {
        /// The certificate chain PEM file is missing, unreadable or holds no usable certificate.
        case certificateChain
        /// The private key PEM file is missing, unreadable or holds no usable key.
        case privateKey
        /// The private key does not belong to the leaf certificate.
        case keyMismatch
        /// OpenSSL refused a setting or could not allocate a context or session.
        case configuration
        /// The peer sent plaintext HTTP (or an HTTP proxy request) to the TLS port.
        case notTLS
        /// The handshake failed: garbage, an old protocol version, no shared cipher or ALPN.
        case handshake
        /// The peer tried to renegotiate, which this server refuses.
        case renegotiation
        /// A fatal error after the handshake: a corrupt record, a fatal alert.
        case `protocol`
        /// Application data was sent after `close()` or after the session failed.
        case closed
        /// Writing the development certificate or key, or generating them, failed.
        case certificateGeneration
    }

    /// The category of the failure.
    public let kind: Kind
    /// What we were doing, as a sentence fragment ("could not load the certificate chain").
    public let summary: String
    /// The file involved, when the failure concerns one.
    public let path: String?
    /// OpenSSL's error queue at the time of the failure, one `ERR_error_string_n` line per entry.
    public let reasons: [String]

    /// Creates an error from its parts; `reasons` are usually `ERR_error_string_n` lines.
    public init(kind: Kind, summary: String, path: String? = nil, reasons: [String] = []) {
        self.kind = kind
        self.summary = summary
        self.path = path
        self.reasons = reasons
    }

    /// One sentence: "TLS: <summary> (<path>): <OpenSSL reasons>."
    public var description: String {
        var text = "TLS: " + summary
        if let path {
            text += " (" + path + ")"
        }
        if !reasons.isEmpty {
            text += ": " + reasons.joined(separator: "; ")
        }
        return text
    }
}

extension TLSError {
    /// The longest line `ERR_error_string_n` writes; OpenSSL documents 256 as sufficient.
    private static let reasonBufferSize = 256

    /// Empties this thread's OpenSSL error queue, oldest code first.
    ///
    /// The queue is per thread, so it must be drained (or cleared) around every call whose
    /// failure we report; otherwise a stale entry would be blamed on the next connection.
    static func drainOpenSSLErrorCodes() -> [UInt] {
        var codes: [UInt] = []
        while true {
            let code = ERR_get_error()
            if code == 0 {
                return codes
            }
            codes.append(code)
        }
    }

    /// Whether a queued code says "this was plaintext HTTP (or a proxy CONNECT), not TLS".
    static func isHTTPRequest(_ code: UInt) -> Bool {
        let reason = ERR_GET_REASON(code)
        return ERR_GET_LIB(code) == ERR_LIB_SSL
            && (reason == SSL_R_HTTP_REQUEST || reason == SSL_R_HTTPS_PROXY_REQUEST)
    }

    /// OpenSSL's text for one code, e.g. "error:0A00010B:SSL routines::wrong version number".
    static func reasonString(_ code: UInt) -> String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: reasonBufferSize) { buffer in
            guard let base = buffer.baseAddress else {
                return "OpenSSL error \(code)"
            }
            ERR_error_string_n(code, base, reasonBufferSize)
            return String(cString: base)
        }
    }

    /// Builds an error from the current OpenSSL queue, which it empties.
    static func openSSL(_ kind: Kind, _ summary: String, path: String? = nil) -> TLSError {
        let codes = drainOpenSSLErrorCodes()
        return TLSError(kind: kind, summary: summary, path: path, reasons: codes.map(reasonString))
    }
}
