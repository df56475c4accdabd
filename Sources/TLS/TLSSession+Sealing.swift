import Bytes
import COpenSSL

extension TLSSession {
    /// Encrypts a run of queued chunks (a connection's frames since its last flush) as one
    /// stream of records, in order.
    ///
    /// With TLS 1.3 the session's `RecordSealer` copies the chunks into the output once and
    /// encrypts them there. Otherwise (TLS 1.2, or a KeyUpdate owed) the chunks are gathered into
    /// `scratch` and each scratch-full is one `SSL_write`, so a burst of small frames still becomes
    /// as few records as TLS allows.
    ///
    /// - Throws: what `send(_:)` throws.
    public func send(_ chunks: [ByteChunk], byteCount: Int, scratch: UnsafeMutableRawBufferPointer) throws(TLSError) {
        if chunks.count == 1 {
            try send(chunks[0].bytes)
            return
        }
        try checkSendable()
        guard byteCount > 0 else {
            return
        }
        guard handshakeDone, pendingPlaintext.isEmpty else {
            for chunk in chunks {
                pendingPlaintext.append(contentsOf: chunk.bytes)
            }
            return
        }
        updateKeysIfDue()
        if let sealer = directSealer {
            try seal(with: sealer, chunks.lazy.map(\.bytes), byteCount: byteCount, type: RecordSealer.applicationData)
            return
        }
        var used = 0
        for chunk in chunks {
            var rest = chunk.bytes
            while !rest.isEmpty {
                let count = min(rest.count, scratch.count - used)
                UnsafeMutableRawBufferPointer(rebasing: scratch[used..<(used + count)])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: rest[0..<count]))
                used += count
                rest = UnsafeRawBufferPointer(rebasing: rest[count...])
                if used == scratch.count {
                    try write(UnsafeRawBufferPointer(scratch))
                    used = 0
                }
            }
        }
        if used > 0 {
            try write(UnsafeRawBufferPointer(rebasing: scratch[0..<used]))
        }
    }

    /// The sealer, when application data may go straight to it. Not while OpenSSL owes the
    /// peer a KeyUpdate: it sends that reply on the next `SSL_write` only (RFC 8446 §4.6.3), so
    /// that write goes through OpenSSL, whose KeyUpdate and data then reach the sealer in order.
    var directSealer: RecordSealer? {
        guard let sealer, SSL_get_key_update_type(ssl) == SSL_KEY_UPDATE_NONE else {
            return nil
        }
        return sealer
    }

    /// Seals content into the output; a failure ends the session, as an OpenSSL one would.
    func seal(
        with sealer: RecordSealer, _ pieces: some Sequence<UnsafeRawBufferPointer>, byteCount: Int, type: UInt8
    ) throws(TLSError) {
        do {
            try sealer.seal(pieces, byteCount: byteCount, type: type, into: &outbound)
        } catch {
            failure = error
            throw error
        }
    }

    /// Takes over encryption from the write keys OpenSSL offers through `BIO_CTRL_SET_KTLS`;
    /// returns whether it did (false keeps OpenSSL encrypting, as for TLS 1.2). The traffic
    /// secret is dropped either way: only the sealer needs it.
    func acceptWriteKeys(_ info: UnsafeRawPointer) -> Bool {
        defer { forgetWriteTrafficSecret() }
        guard sealer == nil, let secret = writeTrafficSecret,
            let cipher = SSL_get_current_cipher(ssl), let digest = SSL_CIPHER_get_handshake_digest(cipher)
        else {
            return false
        }
        var keys = COpenSSL_TrafficKeys()
        defer { withUnsafeMutableBytes(of: &keys) { OPENSSL_cleanse($0.baseAddress, $0.count) } }
        guard COpenSSL_ktls_traffic_keys(info, &keys) == 1,
            let sealer = RecordSealer(keys: keys, secret: secret, digest: digest)
        else {
            return false
        }
        self.sealer = sealer
        return true
    }

    /// Seals a record OpenSSL wrote through the BIO after handing over its keys: session
    /// tickets, alerts such as close_notify, a KeyUpdate, or application data from `SSL_write`.
    /// After our own KeyUpdate has gone out under the old keys, moves to the next ones.
    func sealFromOpenSSL(_ sealer: RecordSealer, _ bytes: UnsafeRawBufferPointer) -> Bool {
        let type = nextRecordType
        nextRecordType = RecordSealer.applicationData
        do {
            try sealer.seal(CollectionOfOne(bytes), byteCount: bytes.count, type: type, into: &outbound)
            if type == RecordSealer.handshake && Self.containsKeyUpdate(bytes) {
                try sealer.updateKeys()
            }
            return true
        } catch {
            failure = error
            return false
        }
    }

    /// Whether a run of handshake messages (type, 24-bit length, body) holds a KeyUpdate.
    static func containsKeyUpdate(_ messages: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset + 4 <= messages.count {
            if messages[offset] == RecordSealer.keyUpdate {
                return true
            }
            let length = Int(messages[offset + 1]) << 16 | Int(messages[offset + 2]) << 8 | Int(messages[offset + 3])
            offset += 4 + length
        }
        return false
    }

    private func forgetWriteTrafficSecret() {
        writeTrafficSecret?.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) }
        writeTrafficSecret = nil
    }

    /// OpenSSL's key log callback, installed on every context: keeps the server application
    /// traffic secret (the `SERVER_TRAFFIC_SECRET_0` line, RFC 8446 §7.1) for the sealer, which
    /// needs it to update its keys. Nothing is written anywhere; every other line is ignored.
    static let keyLogCallback: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> Void = { ssl, line in
        guard let ssl, let line, let bio = SSL_get_wbio(ssl), let data = BIO_get_data(bio) else {
            return
        }
        let label = "SERVER_TRAFFIC_SECRET_0 "
        guard strncmp(line, label, label.utf8.count) == 0, let secret = lastHexField(line) else {
            return
        }
        Unmanaged<TLSSession>.fromOpaque(data).takeUnretainedValue().writeTrafficSecret = secret
    }

    /// Decodes the hex after the last space of a key log line ("LABEL client_random secret"),
    /// reading the C string in place so the secret is never held as a Swift `String`.
    static func lastHexField(_ line: UnsafePointer<CChar>) -> [UInt8]? {
        let length = strlen(line)
        var start = length
        while start > 0 && line[start - 1] != 0x20 {
            start -= 1
        }
        let digits = length - start
        guard digits > 0, digits % 2 == 0 else {
            return nil
        }
        var bytes = [UInt8](repeating: 0, count: digits / 2)
        for index in 0..<bytes.count {
            guard let high = hexValue(line[start + 2 * index]), let low = hexValue(line[start + 2 * index + 1]) else {
                bytes.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) }
                return nil
            }
            bytes[index] = high << 4 | low
        }
        return bytes
    }

    private static func hexValue(_ character: CChar) -> UInt8? {
        switch UInt8(bitPattern: character) {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt8(bitPattern: character) - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt8(bitPattern: character) - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt8(bitPattern: character) - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
