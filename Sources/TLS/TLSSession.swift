import Bytes
import COpenSSL

/// One connection's server-side TLS state: ciphertext in, plaintext out, and back.
///
/// Confined to one event loop thread (deliberately not `Sendable`); it never touches a file
/// descriptor. The event loop feeds what it read from the socket to `receive(_:)`, passes the
/// returned plaintext up, encrypts replies with `send(_:)`, and after every call writes whatever
/// `takeOutput()` returns (handshake records, application records, alerts). After a thrown
/// error, write the pending output (usually an alert) and close the socket.
public final class TLSSession {
    /// Keeps the `SSL_CTX` alive for as long as the `SSL` that points into it.
    let context: TLSContext
    /// The `SSL *`, owned by this object; it owns the `SessionBIO` that points back at us.
    let ssl: OpaquePointer

    /// Ciphertext passed to the current `receive` call, valid only during that call. The BIO
    /// copies from it straight into OpenSSL's record buffer, so it is never staged here.
    var inbound = UnsafeRawBufferPointer(start: nil, count: 0)
    /// How much of `inbound` OpenSSL has consumed.
    var inboundOffset = 0
    /// Ciphertext OpenSSL has produced and the socket has not taken yet.
    var outbound = OutputBuffer()
    /// Application bytes sent before the handshake finished: TLS cannot encrypt them until the
    /// keys exist, and callers should not have to wait to queue their first reply.
    var pendingPlaintext: [UInt8] = []

    /// Seals our TLS 1.3 records once OpenSSL handed over the write keys (`RecordSealer`); nil
    /// before that, and for TLS 1.2, where OpenSSL encrypts.
    var sealer: RecordSealer?
    /// The server application traffic secret, from OpenSSL's key log callback, kept until the
    /// sealer takes it.
    var writeTrafficSecret: [UInt8]?
    /// The content type of the next record OpenSSL writes through the sealer: application data
    /// unless OpenSSL announced an alert or a handshake message.
    var nextRecordType = RecordSealer.applicationData

    /// Set once `SSL_do_handshake` succeeds; application data flows only afterwards.
    var handshakeDone = false
    /// Whether the waiting output is only what may wait for the next write (`hasUrgentOutput`).
    private var outputCanWait = false
    /// The first fatal error; once set, OpenSSL's state is unusable (and `SSL_shutdown` must not
    /// be called), so every later call reports it again.
    var failure: TLSError?
    /// Set by the info callback when OpenSSL answers a renegotiation attempt with a
    /// `no_renegotiation` warning and carries on; we end the connection instead, because a peer
    /// that renegotiates is either broken or probing.
    var renegotiationAttempted = false
    /// Set once `close()` queued our close_notify; sending after it would violate the protocol.
    var closeQueued = false
    /// TLS 1.3 records sent under the current write key on OpenSSL's own record path (the
    /// sealer counts its own), towards `keyUpdateInterval`.
    var recordsUnderKey: UInt64 = 0
    /// Records after which we send a KeyUpdate of our own: AES-GCM may seal at most 2^24.5
    /// records under one key (RFC 8446 §5.5), so we move on well before 2^24.
    var keyUpdateInterval: UInt64 = 1 << 23

    /// Whether the peer sent close_notify: no more application data will arrive, and the caller
    /// should `close()` and then close the socket once the output is written.
    public internal(set) var peerClosed = false

    /// Creates the server side of one connection.
    ///
    /// - Throws: `TLSError` with kind `configuration` when OpenSSL cannot allocate the session.
    public init(context: TLSContext) throws(TLSError) {
        ERR_clear_error()
        guard let ssl = SSL_new(context.pointer) else {
            throw TLSError.openSSL(.configuration, "could not create a TLS session")
        }
        guard let method = SessionBIO.method.pointer, let bio = BIO_new(method) else {
            SSL_free(ssl)
            throw TLSError.openSSL(.configuration, "could not create the session's memory BIO")
        }
        self.context = context
        self.ssl = ssl
        BIO_set_data(bio, Unmanaged.passUnretained(self).toOpaque())
        BIO_set_init(bio, 1)
        // One BIO serves as both read and write side; SSL_set_bio takes its single reference.
        SSL_set_bio(ssl, bio, bio)
        // pendingPlaintext moves when it grows, so a retried SSL_write may see a new address.
        _ = COpenSSL_SSL_set_mode(ssl, Int(SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER))
        SSL_set_accept_state(ssl)
    }

    deinit {
        SSL_free(ssl)
        sealer?.retire()
        writeTrafficSecret?.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) }
    }

    /// Whether the handshake has finished and application data can flow both ways.
    public var isHandshakeComplete: Bool {
        handshakeDone
    }

    /// Whether ciphertext is waiting for `takeOutput()`.
    public var hasOutput: Bool {
        !outbound.isEmpty
    }

    /// Whether the waiting ciphertext must be written now because the peer waits for it: the
    /// handshake's flights (TLS 1.2's last one included) and anything queued beside them.
    ///
    /// What OpenSSL writes on its own once a TLS 1.3 handshake is complete (the session tickets,
    /// a KeyUpdate answer) can wait for the next write of application data, the response to the
    /// client's first request: one packet fewer per connection, and no ticket reaches a client
    /// while it is still sending that request. Python's `ssl` loses the request when its reader
    /// thread handles a ticket while its writer thread sends (the websockets library reads and
    /// writes from two threads), and the connection then stalls until the handshake timeout.
    public var hasUrgentOutput: Bool {
        hasOutput && !outputCanWait
    }

    /// Hands over the ciphertext waiting to be written to the socket and empties the buffer.
    ///
    /// - Returns: the bytes as a chunk for the write queue (not copied), or nil when nothing
    ///   is pending.
    public func takeOutput() -> ByteChunk? {
        outbound.take()
    }

    /// Feeds ciphertext from the socket and returns the application bytes it decrypted.
    ///
    /// The result may be empty (mid-handshake, a partial record, an alert). Completing the
    /// handshake also encrypts anything `send(_:)` queued before it, so check `hasOutput`
    /// after every call. Input that follows the peer's close_notify is ignored.
    ///
    /// - Throws: `TLSError` (`notTLS`, `handshake`, `renegotiation`, `protocol`) on a fatal error;
    ///   the session is unusable afterwards.
    public func receive(_ ciphertext: UnsafeRawBufferPointer) throws(TLSError) -> [UInt8] {
        if let failure {
            throw failure
        }
        guard !peerClosed else {
            return []
        }
        inbound = ciphertext
        inboundOffset = 0
        defer {
            inbound = UnsafeRawBufferPointer(start: nil, count: 0)
            inboundOffset = 0
        }
        let wasDone = handshakeDone
        let urgentBefore = hasUrgentOutput
        defer {
            outputCanWait = !urgentBefore && handshakeDone && (wasDone || SSL_version(ssl) == TLS1_3_VERSION)
        }
        if !handshakeDone {
            try continueHandshake()
            guard handshakeDone else {
                return []
            }
        }
        return try readPlaintext()
    }

    /// Encrypts application bytes into the output.
    ///
    /// Before the handshake completes the bytes are kept and encrypted as soon as it does.
    ///
    /// - Throws: `TLSError` with kind `closed` after `close()`, or the session's earlier failure.
    public func send(_ plaintext: UnsafeRawBufferPointer) throws(TLSError) {
        try checkSendable()
        guard !plaintext.isEmpty else {
            return
        }
        guard handshakeDone, pendingPlaintext.isEmpty else {
            pendingPlaintext.append(contentsOf: plaintext)
            return
        }
        try write(plaintext)
    }

    /// Throws the session's failure, or `closed` once close_notify is queued.
    func checkSendable() throws(TLSError) {
        if let failure {
            throw failure
        }
        guard !closeQueued else {
            throw TLSError(kind: .closed, summary: "application data cannot be sent after close_notify")
        }
    }

    /// Queues close_notify once; its record appears in `takeOutput()`.
    ///
    /// Mid-handshake, or after a failure, there is nothing to close cleanly and nothing is sent.
    public func close() {
        guard !closeQueued else {
            return
        }
        closeQueued = true
        guard handshakeDone, failure == nil else {
            return
        }
        ERR_clear_error()
        // 0 means "sent ours, theirs not seen yet", 1 "both done": either way ours is queued,
        // and a failure here has no one to report to, so the queue is just cleared.
        _ = SSL_shutdown(ssl)
        ERR_clear_error()
        // Nothing is sent after close_notify: the write keys and secret go now.
        sealer?.retire()
    }

    /// The negotiated protocol version, e.g. "TLSv1.3", once the handshake is complete.
    public var protocolVersion: String? {
        guard handshakeDone, let name = SSL_get_version(ssl) else {
            return nil
        }
        return String(cString: name)
    }

    /// The ALPN protocol chosen in the handshake, or nil when the client offered none.
    public var alpnProtocol: String? {
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &data, &length)
        guard let data, length > 0 else {
            return nil
        }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }
}
