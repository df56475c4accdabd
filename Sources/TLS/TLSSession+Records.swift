import COpenSSL

extension TLSSession {
    /// The most plaintext one TLS record can carry (RFC 8446 §5.1, RFC 5246 §6.2.1).
    static let maxRecordPlaintext = 16_384

    /// An upper bound on a record's framing and tag: 5-byte header plus 16-byte AEAD tag plus
    /// the TLS 1.3 content type byte or the TLS 1.2 8-byte explicit nonce.
    static let maxRecordOverhead = 32

    /// How one pass of `SSL_read` calls ended.
    enum ReadOutcome {
        /// OpenSSL wants more ciphertext: everything available was processed.
        case drained
        /// The chunk filled up and more plaintext may be waiting.
        case chunkFull
        /// The peer's close_notify arrived.
        case peerClosed
        /// A fatal TLS error.
        case failed(TLSError)
    }

    /// Advances the handshake with the input at hand; sets `handshakeDone` when it finishes and
    /// then encrypts what `send(_:)` queued meanwhile.
    func continueHandshake() throws(TLSError) {
        ERR_clear_error()
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            handshakeDone = true
            try flushPendingPlaintext()
            return
        }
        let code = SSL_get_error(ssl, result)
        if code == SSL_ERROR_WANT_READ || code == SSL_ERROR_WANT_WRITE {
            return
        }
        throw fail(duringHandshake: true)
    }

    /// Decrypts every complete record of the input into one array, growing it only in the rare
    /// case the first estimate was short.
    func readPlaintext() throws(TLSError) -> [UInt8] {
        var plaintext: [UInt8] = []
        reading: while true {
            let bound = plaintextBound()
            guard bound > 0 else {
                break
            }
            var outcome = ReadOutcome.drained
            let chunk = [UInt8](unsafeUninitializedCapacity: bound) { buffer, count in
                outcome = readRecords(into: buffer, count: &count)
            }
            if plaintext.isEmpty {
                plaintext = chunk
            } else {
                plaintext.append(contentsOf: chunk)
            }
            switch outcome {
            case .chunkFull:
                continue
            case .drained:
                break reading
            case .peerClosed:
                peerClosed = true
                break reading
            case .failed(let error):
                failure = error
                throw error
            }
        }
        if renegotiationAttempted {
            let error = TLSError(kind: .renegotiation, summary: "the peer attempted a refused renegotiation")
            failure = error
            throw error
        }
        try flushPendingPlaintext()
        return plaintext
    }

    /// The most plaintext the current input can yield: every unread input byte, plus one record
    /// if OpenSSL holds a partial or undecrypted record from an earlier call. Decryption only
    /// shrinks data, so this never undercounts, and in the common case (whole records) it is
    /// close to exact, which lets us decrypt straight into the array we return.
    private func plaintextBound() -> Int {
        let unread = inbound.count - inboundOffset
        return SSL_has_pending(ssl) == 1 ? unread + Self.maxRecordPlaintext : unread
    }

    /// Calls `SSL_read_ex` into `buffer` until OpenSSL needs more input, the buffer is full, the
    /// peer closes, or an error occurs.
    private func readRecords(into buffer: UnsafeMutableBufferPointer<UInt8>, count: inout Int) -> ReadOutcome {
        guard let base = buffer.baseAddress else {
            return .chunkFull
        }
        while count < buffer.count {
            ERR_clear_error()
            var read = 0
            let result = SSL_read_ex(ssl, base + count, buffer.count - count, &read)
            if result == 1 {
                count += read
                continue
            }
            switch SSL_get_error(ssl, result) {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                return .drained
            case SSL_ERROR_ZERO_RETURN:
                return .peerClosed
            default:
                return .failed(makeFailure(duringHandshake: false))
            }
        }
        return .chunkFull
    }

    /// Encrypts `plaintext` into `outbound`, reserving room for it and its record framing first
    /// so a large message costs one allocation rather than one per record. The sealer does it
    /// when it holds the keys (`directSealer`); otherwise `SSL_write`.
    func write(_ plaintext: UnsafeRawBufferPointer) throws(TLSError) {
        guard let base = plaintext.baseAddress else {
            return
        }
        updateKeysIfDue()
        if let sealer = directSealer {
            try seal(with: sealer, CollectionOfOne(plaintext), byteCount: plaintext.count, type: RecordSealer.applicationData)
            return
        }
        let records = (plaintext.count + Self.maxRecordPlaintext - 1) / Self.maxRecordPlaintext
        outbound.reserve(plaintext.count + records * Self.maxRecordOverhead)
        recordsUnderKey += UInt64(records)
        var written = 0
        while written < plaintext.count {
            ERR_clear_error()
            var count = 0
            let result = SSL_write_ex(ssl, base + written, plaintext.count - written, &count)
            if result == 1 {
                written += count
                continue
            }
            let code = SSL_get_error(ssl, result)
            guard code == SSL_ERROR_WANT_READ || code == SSL_ERROR_WANT_WRITE else {
                throw fail(duringHandshake: false)
            }
            // OpenSSL wants to hear from the peer first (only a post-handshake message can cause
            // this): keep the rest, in order, for the next receive.
            pendingPlaintext.append(contentsOf: UnsafeRawBufferPointer(rebasing: plaintext[written...]))
            return
        }
    }

    /// Asks OpenSSL for a KeyUpdate of our own (TLS 1.3) once `keyUpdateInterval` records went
    /// out under the current key; OpenSSL sends it with the next write, before the data, and
    /// the sealer (if any) moves to the next keys as it goes out (`sealFromOpenSSL`).
    func updateKeysIfDue() {
        guard (sealer?.sequence ?? recordsUnderKey) >= keyUpdateInterval,
            SSL_version(ssl) == TLS1_3_VERSION, SSL_get_key_update_type(ssl) == SSL_KEY_UPDATE_NONE
        else {
            return
        }
        if SSL_key_update(ssl, SSL_KEY_UPDATE_NOT_REQUESTED) == 1 {
            recordsUnderKey = 0
        }
        ERR_clear_error()
    }

    /// Encrypts what was queued before the handshake finished (or after a deferred write).
    func flushPendingPlaintext() throws(TLSError) {
        guard !pendingPlaintext.isEmpty, !closeQueued else {
            return
        }
        let queued = pendingPlaintext
        pendingPlaintext = []
        // withUnsafeBytes rethrows as `any Error`, so the typed error is carried out by hand.
        var thrown: TLSError?
        queued.withUnsafeBytes { bytes in
            do throws(TLSError) {
                try write(bytes)
            } catch {
                thrown = error
            }
        }
        if let thrown {
            throw thrown
        }
    }

    /// Records and returns the error for the OpenSSL failure just reported.
    private func fail(duringHandshake: Bool) -> TLSError {
        let error = makeFailure(duringHandshake: duringHandshake)
        failure = error
        return error
    }

    /// Turns the OpenSSL error queue into a session error, recognising plaintext HTTP.
    private func makeFailure(duringHandshake: Bool) -> TLSError {
        let codes = TLSError.drainOpenSSLErrorCodes()
        let reasons = codes.isEmpty ? ["no OpenSSL reason was queued"] : codes.map(TLSError.reasonString)
        if codes.contains(where: TLSError.isHTTPRequest) {
            return TLSError(kind: .notTLS, summary: "the client sent plaintext HTTP to the TLS port", reasons: reasons)
        }
        if duringHandshake || !handshakeDone {
            return TLSError(kind: .handshake, summary: "the TLS handshake failed", reasons: reasons)
        }
        return TLSError(kind: .protocol, summary: "the TLS connection failed", reasons: reasons)
    }

    /// OpenSSL's info callback, installed on every context: notes the `no_renegotiation`
    /// warning alert OpenSSL sends when it refuses a client's renegotiation (RFC 5246 §7.2.2),
    /// so that `receive` can end the connection instead of letting it carry on.
    static let infoCallback: @convention(c) (OpaquePointer?, Int32, Int32) -> Void = { ssl, where_, value in
        guard where_ & SSL_CB_WRITE_ALERT == SSL_CB_WRITE_ALERT,
            value & 0xff == SSL_AD_NO_RENEGOTIATION,
            let ssl, let bio = SSL_get_rbio(ssl), let data = BIO_get_data(bio)
        else {
            return
        }
        Unmanaged<TLSSession>.fromOpaque(data).takeUnretainedValue().renegotiationAttempted = true
    }
}
