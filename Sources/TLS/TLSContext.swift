import COpenSSL

/// The server's TLS configuration: certificate chain, private key and protocol policy.
///
/// Loaded once at start and shared by every connection on every event loop. Policy: TLS 1.2 and
/// 1.3 only; TLS 1.2 limited to ECDHE key exchange with AEAD ciphers; the server's cipher order
/// (AES-128-GCM first, ChaCha20 for clients that prefer it); no compression (CRIME);
/// no renegotiation (a server-side DoS vector and pointless for WebSocket); ALPN `http/1.1`
/// when the client offers ALPN at all. The server-side session cache is off so that memory does
/// not grow with the number of past connections; resumption still works through stateless
/// tickets.
public final class TLSContext: @unchecked Sendable {
    // @unchecked: the SSL_CTX is never mutated after init, and OpenSSL locks its own shared state.

    /// The `SSL_CTX *`, owned by this object.
    let pointer: OpaquePointer
    /// Whether TLS 1.3 sessions seal their own records (`RecordSealer`).
    public let recordSealing: Bool
    /// Whether the OpenSSL this process runs with is one the sealer is tested against.
    public static let sealsRecordsByDefault = RecordSealer.isTested(openSSLVersion: OpenSSL_version_num())

    /// TLS 1.2 ciphers: forward secrecy (ECDHE) and authenticated encryption only, AES-128-GCM
    /// first (see `tls13CipherSuites`).
    static let tls12CipherList = "ECDHE+AESGCM+AES128:ECDHE+AESGCM+AES256:ECDHE+CHACHA20"

    /// TLS 1.3 suites in the server's order: AES-128-GCM first, because every delivery is
    /// encrypted once per member and AES-128 costs 10 rounds to AES-256's 14 (the choice Go's
    /// crypto/tls and most CDNs make); ChaCha20 still wins for clients that put it first, which
    /// is how phones without AES instructions say so (`SSL_OP_PRIORITIZE_CHACHA`).
    static let tls13CipherSuites = "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"

    /// Loads the PEM certificate chain (leaf first, then intermediates) and the PEM private key.
    ///
    /// - Throws: `TLSError` naming the file and OpenSSL's reason when a file is missing,
    ///   unreadable or not PEM, when the key does not match the leaf, or when OpenSSL rejects
    ///   a setting.
    ///
    /// `recordSealing` hands TLS 1.3 encryption to `RecordSealer`; it is on only with the
    /// OpenSSL versions the sealer is tested against (`RecordSealer.isTested`), because it
    /// relies on how they hand over keys. Elsewhere OpenSSL's own record layer encrypts.
    public init(
        certificateChainPath: String, privateKeyPath: String,
        recordSealing: Bool = TLSContext.sealsRecordsByDefault
    ) throws(TLSError) {
        ERR_clear_error()
        guard let context = SSL_CTX_new(TLS_server_method()) else {
            throw TLSError.openSSL(.configuration, "could not create an OpenSSL server context")
        }
        pointer = context
        self.recordSealing = recordSealing
        try applyPolicy()
        try loadCertificateChain(path: certificateChainPath)
        try loadPrivateKey(path: privateKeyPath, certificateChainPath: certificateChainPath)
    }

    deinit {
        SSL_CTX_free(pointer)
    }

    private func applyPolicy() throws(TLSError) {
        guard COpenSSL_SSL_CTX_set_min_proto_version(pointer, TLS1_2_VERSION) == 1 else {
            throw TLSError.openSSL(.configuration, "could not require TLS 1.2 or newer")
        }
        SSL_CTX_set_options(
            pointer,
            COpenSSL_SSL_OP_NO_RENEGOTIATION() | COpenSSL_SSL_OP_NO_COMPRESSION()
                | COpenSSL_SSL_OP_CIPHER_SERVER_PREFERENCE() | COpenSSL_SSL_OP_PRIORITIZE_CHACHA())
        if recordSealing {
            SSL_CTX_set_options(pointer, COpenSSL_SSL_OP_ENABLE_KTLS())
        }
        guard SSL_CTX_set_cipher_list(pointer, Self.tls12CipherList) == 1 else {
            throw TLSError.openSSL(.configuration, "could not set the TLS 1.2 cipher list")
        }
        guard SSL_CTX_set_ciphersuites(pointer, Self.tls13CipherSuites) == 1 else {
            throw TLSError.openSSL(.configuration, "could not set the TLS 1.3 cipher suites")
        }
        // Release the ~34 KiB of record buffers whenever a connection is idle: a chat server
        // holds many quiet connections, and memory per connection is what limits it.
        _ = COpenSSL_SSL_CTX_set_mode(pointer, Int(SSL_MODE_RELEASE_BUFFERS))
        _ = COpenSSL_SSL_CTX_set_session_cache_mode(pointer, Int(SSL_SESS_CACHE_OFF))
        SSL_CTX_set_alpn_select_cb(pointer, TLSContext.selectALPN, nil)
        SSL_CTX_set_info_callback(pointer, TLSSession.infoCallback)
        // TLS 1.3 records are sealed by the session (RecordSealer), which OpenSSL hands its write
        // keys to as it would to the kernel; the key log gives it the secret for KeyUpdate.
        if recordSealing {
            SSL_CTX_set_keylog_callback(pointer, TLSSession.keyLogCallback)
        }
    }

    private func loadCertificateChain(path: String) throws(TLSError) {
        guard SSL_CTX_use_certificate_chain_file(pointer, path) == 1 else {
            throw TLSError.openSSL(.certificateChain, "could not load the certificate chain", path: path)
        }
    }

    private func loadPrivateKey(path: String, certificateChainPath: String) throws(TLSError) {
        guard let file = BIO_new_file(path, "r") else {
            throw TLSError.openSSL(.privateKey, "could not open the private key", path: path)
        }
        defer { BIO_free(file) }
        // An encrypted key must not make OpenSSL prompt on the terminal: refuse any password.
        guard let key = PEM_read_bio_PrivateKey(file, nil, { _, _, _, _ in 0 }, nil) else {
            throw TLSError.openSSL(.privateKey, "could not read an unencrypted PEM private key", path: path)
        }
        defer { EVP_PKEY_free(key) }
        let summary = "the private key in \(path) does not match the certificate"
        guard SSL_CTX_use_PrivateKey(pointer, key) == 1, SSL_CTX_check_private_key(pointer) == 1 else {
            throw TLSError.openSSL(.keyMismatch, summary, path: certificateChainPath)
        }
    }
}

extension TLSContext {
    /// The ALPN protocol identifier we speak (RFC 7301), as the bytes the client sends.
    static let http11: [UInt8] = Array("http/1.1".utf8)

    /// Picks `http/1.1` from the client's list; a client that offers ALPN without it gets a
    /// fatal `no_application_protocol` alert (RFC 7301 §3.2), since it would speak something
    /// this server cannot. Clients offering no ALPN never reach this callback.
    static let selectALPN:
        @convention(c) (
            OpaquePointer?, UnsafeMutablePointer<UnsafePointer<UInt8>?>?, UnsafeMutablePointer<UInt8>?,
            UnsafePointer<UInt8>?, UInt32, UnsafeMutableRawPointer?
        ) -> Int32 = { _, out, outLength, offered, offeredLength, _ in
            guard let out, let outLength, let offered else {
                return SSL_TLSEXT_ERR_ALERT_FATAL
            }
            let wanted = TLSContext.http11
            var index = 0
            let end = Int(offeredLength)
            // Each entry is one length byte followed by that many bytes; a length running past
            // the end is a malformed list and simply ends the scan.
            while index < end {
                let length = Int(offered[index])
                let start = index + 1
                guard start + length <= end else {
                    break
                }
                if length == wanted.count && wanted.indices.allSatisfy({ wanted[$0] == offered[start + $0] }) {
                    out.pointee = offered + start
                    outLength.pointee = UInt8(length)
                    return SSL_TLSEXT_ERR_OK
                }
                index = start + length
            }
            return SSL_TLSEXT_ERR_ALERT_FATAL
        }
}
