import COpenSSL

/// Encrypts one session's outgoing TLS 1.3 records with the traffic keys OpenSSL hands over
/// through its kernel-TLS interface (RFC 8446 §5.2): the job the kernel would do with `TLS_TX`.
///
/// OpenSSL 3.0's record layer costs about 2 µs per `SSL_write` on top of the AEAD itself
/// (parameter lookups, buffer copies, BIO calls; BENCHMARKS.md), and a fan-out writes one record
/// per member per flush. Sealing here copies the queued frames once, into the output the socket
/// sends from, and encrypts them there in one AEAD pass per record. OpenSSL keeps everything else:
/// the handshake, reading, alerts and session tickets (which reach `seal` through the BIO with
/// their content type), and the key schedule, except for the write-key update after a KeyUpdate,
/// which `updateKeys()` derives from the traffic secret (RFC 8446 §7.2) because OpenSSL 3.0 does
/// not pass updated keys to the BIO.
final class RecordSealer {
    /// The AEAD ciphers a TLS 1.3 session can negotiate, fetched once per process.
    private struct Ciphers: @unchecked Sendable {
        // @unchecked: EVP_CIPHER objects are immutable and shareable once fetched.
        let aes128GCM = EVP_CIPHER_fetch(nil, "AES-128-GCM", nil)
        let aes256GCM = EVP_CIPHER_fetch(nil, "AES-256-GCM", nil)
        let chacha20Poly1305 = EVP_CIPHER_fetch(nil, "ChaCha20-Poly1305", nil)
    }
    private static let ciphers = Ciphers()

    /// TLS 1.3's record content types (RFC 8446 §5.1).
    static let applicationData: UInt8 = 23
    static let handshake: UInt8 = 22
    /// The handshake message type of KeyUpdate (RFC 8446 §4).
    static let keyUpdate: UInt8 = 24
    /// The AEAD tag every TLS 1.3 cipher suite appends.
    static let tagLength = 16
    /// Header, inner content type and tag: what a record adds to its content.
    static let overhead = 5 + 1 + tagLength

    private let context: OpaquePointer
    /// The hash of the cipher suite, for HKDF when the keys are updated.
    private let digest: OpaquePointer
    private let keyLength: Int
    /// The current write traffic secret, from which `updateKeys()` derives the next keys.
    private var secret: [UInt8]
    /// The static IV (12 bytes) and room for each record's nonce, allocated once.
    private let iv: UnsafeMutablePointer<UInt8>
    private let nonce: UnsafeMutablePointer<UInt8>
    /// The next record's sequence number.
    private(set) var sequence: UInt64
    /// Set by `retire()`: the keys are wiped and nothing more can be sealed.
    private(set) var isRetired = false

    /// Whether the sealer is tested against this OpenSSL (`OpenSSL_version_num()`): 3.0.x,
    /// which hands the write keys over once and leaves KeyUpdate to us. From 3.2 OpenSSL offers
    /// the BIO new keys after a KeyUpdate, which this type does not take, and the session would
    /// fail; other versions keep OpenSSL's own record layer.
    static func isTested(openSSLVersion: UInt) -> Bool {
        // 0xMNN00PP0: major and minor in the top 12 bits.
        openSSLVersion >> 20 == 0x300
    }

    /// Takes over the write direction from the key material OpenSSL offered, or returns nil
    /// when the keys are not TLS 1.3 ones for a cipher this type seals (OpenSSL then keeps
    /// encrypting itself).
    ///
    /// - Parameters:
    ///   - keys: what `COpenSSL_ktls_traffic_keys` read from OpenSSL's crypto_info.
    ///   - secret: the server application traffic secret those keys were derived from.
    ///   - digest: the cipher suite's hash.
    init?(keys: COpenSSL_TrafficKeys, secret: [UInt8], digest: OpaquePointer) {
        guard Int32(keys.version) == TLS1_3_VERSION, let cipher = Self.cipher(for: keys.cipher),
            let context = EVP_CIPHER_CTX_new()
        else {
            return nil
        }
        var keys = keys
        let keyed = withUnsafeBytes(of: &keys.key) { key in
            EVP_EncryptInit_ex(context, cipher, nil, key.bindMemory(to: UInt8.self).baseAddress, nil) == 1
        }
        withUnsafeMutableBytes(of: &keys.key) { OPENSSL_cleanse($0.baseAddress, $0.count) }
        guard keyed else {
            EVP_CIPHER_CTX_free(context)
            return nil
        }
        self.context = context
        self.digest = digest
        self.keyLength = keys.key_length
        self.secret = secret
        let iv = UnsafeMutablePointer<UInt8>.allocate(capacity: 12)
        withUnsafeBytes(of: keys.iv) { iv.update(from: $0.bindMemory(to: UInt8.self).baseAddress!, count: 12) }
        self.iv = iv
        nonce = .allocate(capacity: 12)
        sequence = withUnsafeBytes(of: keys.sequence) { bytes in
            bytes.reduce(0) { $0 << 8 | UInt64($1) }
        }
    }

    deinit {
        retire()
        EVP_CIPHER_CTX_free(context)
        iv.deallocate()
        nonce.deallocate()
    }

    /// Wipes the traffic secret, the IV and the expanded key when the session ends, rather
    /// than whenever the object happens to be freed; sealing afterwards fails.
    func retire() {
        guard !isRetired else { return }
        isRetired = true
        secret.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) }
        secret = []
        EVP_CIPHER_CTX_reset(context)
        OPENSSL_cleanse(iv, 12)
        OPENSSL_cleanse(nonce, 12)
    }

    private static func cipher(for type: UInt16) -> OpaquePointer? {
        switch Int32(type) {
        case TLS_CIPHER_AES_GCM_128: ciphers.aes128GCM
        case TLS_CIPHER_AES_GCM_256: ciphers.aes256GCM
        case TLS_CIPHER_CHACHA20_POLY1305: ciphers.chacha20Poly1305
        default: nil
        }
    }

    /// How many bytes `seal` appends for `byteCount` bytes of content.
    static func sealedSize(of byteCount: Int) -> Int {
        let records = (byteCount + TLSSession.maxRecordPlaintext - 1) / TLSSession.maxRecordPlaintext
        return byteCount + records * overhead
    }

    /// Seals `byteCount` bytes, given as consecutive pieces, as records of content `type` of at
    /// most 16 KiB each, appended to `output`.
    ///
    /// The pieces are copied into place behind each record's header and every record is then
    /// encrypted in place in one pass: OpenSSL's AES-GCM assembly only runs on long stretches,
    /// and one update per 530-byte frame measured slower than the copy it saves.
    func seal(
        _ pieces: some Sequence<UnsafeRawBufferPointer>, byteCount: Int, type: UInt8,
        into output: inout OutputBuffer
    ) throws(TLSError) {
        guard byteCount > 0 else { return }
        try output.append(upTo: Self.sealedSize(of: byteCount)) { start throws(TLSError) in
            var record = start
            var fill = start + 5
            var left = byteCount
            var leftInRecord = min(left, TLSSession.maxRecordPlaintext)
            for piece in pieces {
                guard var from = piece.baseAddress else { continue }
                var count = min(piece.count, left)
                while count > 0 {
                    let taken = min(count, leftInRecord)
                    fill.copyMemory(from: from, byteCount: taken)
                    fill += taken
                    from += taken
                    count -= taken
                    left -= taken
                    leftInRecord -= taken
                    if leftInRecord == 0 {
                        record = try sealRecord(at: record, contentLength: fill - record - 5, type: type)
                        fill = record + 5
                        leftInRecord = min(left, TLSSession.maxRecordPlaintext)
                    }
                }
            }
            guard left == 0 else {
                throw TLSError(kind: .protocol, summary: "the pieces to seal were shorter than announced")
            }
            return record - start
        }
    }

    /// Turns the plaintext laid out after `header` into one record: writes the header, appends
    /// the inner content type, encrypts in place under nonce = IV XOR sequence number with the
    /// header as additional data, and appends the tag. Returns where the next record starts.
    private func sealRecord(at header: UnsafeMutableRawPointer, contentLength: Int, type: UInt8) throws(TLSError)
        -> UnsafeMutableRawPointer
    {
        guard !isRetired else {
            throw TLSError(kind: .closed, summary: "the TLS session has ended")
        }
        guard sequence < UInt64.max else {
            throw TLSError(kind: .protocol, summary: "the TLS record sequence number is exhausted")
        }
        let length = contentLength + 1 + Self.tagLength
        let bytes = header.assumingMemoryBound(to: UInt8.self)
        bytes[0] = Self.applicationData
        bytes[1] = 0x03
        bytes[2] = 0x03
        bytes[3] = UInt8(length >> 8)
        bytes[4] = UInt8(length & 0xff)
        let content = bytes + 5
        content[contentLength] = type
        nonce.update(from: iv, count: 12)
        for index in 0..<8 {
            nonce[4 + index] ^= UInt8(truncatingIfNeeded: sequence >> (56 - 8 * UInt64(index)))
        }
        var written: Int32 = 0
        var finished: Int32 = 0
        guard EVP_EncryptInit_ex(context, nil, nil, nil, nonce) == 1,
            EVP_EncryptUpdate(context, nil, &written, bytes, 5) == 1,
            EVP_EncryptUpdate(context, content, &written, content, Int32(contentLength + 1)) == 1,
            EVP_EncryptFinal_ex(context, content + Int(written), &finished) == 1,
            Int(written + finished) == contentLength + 1,
            COpenSSL_EVP_CIPHER_CTX_get_tag(context, content + contentLength + 1, Int32(Self.tagLength)) == 1
        else {
            throw TLSError.openSSL(.protocol, "could not encrypt a TLS record")
        }
        sequence += 1
        return header + 5 + length
    }

    /// Moves to the next generation of write keys after our KeyUpdate went out (RFC 8446 §7.2):
    /// the next secret is HKDF-Expand-Label(secret, "traffic upd"), and the key and IV come
    /// from it as they did at the handshake; the sequence number starts again at zero.
    func updateKeys() throws(TLSError) {
        guard !isRetired else {
            throw TLSError(kind: .closed, summary: "the TLS session has ended")
        }
        let next = try expandLabel(secret, label: "traffic upd", length: secret.count)
        var key = try expandLabel(next, label: "key", length: keyLength)
        defer { key.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) } }
        var nextIV = try expandLabel(next, label: "iv", length: 12)
        defer { nextIV.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) } }
        guard EVP_EncryptInit_ex(context, nil, nil, key, nil) == 1 else {
            throw TLSError.openSSL(.protocol, "could not install the updated TLS write key")
        }
        secret.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) }
        secret = next
        iv.update(from: nextIV, count: 12)
        sequence = 0
    }

    /// HKDF-Expand-Label with an empty context (RFC 8446 §7.1).
    private func expandLabel(_ secret: [UInt8], label: String, length: Int) throws(TLSError) -> [UInt8] {
        let fullLabel = Array("tls13 \(label)".utf8)
        let info = [UInt8(length >> 8), UInt8(length & 0xff), UInt8(fullLabel.count)] + fullLabel + [0]
        guard let derivation = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, nil) else {
            throw TLSError.openSSL(.protocol, "could not start HKDF")
        }
        defer { EVP_PKEY_CTX_free(derivation) }
        var output = [UInt8](repeating: 0, count: length)
        var outputLength = length
        guard EVP_PKEY_derive_init(derivation) == 1,
            EVP_PKEY_CTX_set_hkdf_mode(derivation, EVP_PKEY_HKDEF_MODE_EXPAND_ONLY) == 1,
            EVP_PKEY_CTX_set_hkdf_md(derivation, digest) == 1,
            EVP_PKEY_CTX_set1_hkdf_key(derivation, secret, Int32(secret.count)) == 1,
            EVP_PKEY_CTX_add1_hkdf_info(derivation, info, Int32(info.count)) == 1,
            EVP_PKEY_derive(derivation, &output, &outputLength) == 1, outputLength == length
        else {
            throw TLSError.openSSL(.protocol, "could not derive the updated TLS traffic keys")
        }
        return output
    }
}
