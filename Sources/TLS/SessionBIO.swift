import COpenSSL

/// The OpenSSL `BIO_METHOD` that connects an `SSL` to its `TLSSession`'s memory, after
/// swift-nio-ssl's `ByteBufferBIO`.
///
/// Reads come straight from the caller's ciphertext buffer for the duration of
/// `TLSSession.receive` (no staging copy, unlike `BIO_s_mem`); writes append to the session's
/// `OutputBuffer`, which `takeOutput()` hands to the write queue without copying. A memory BIO would also keep
/// its high-water capacity for the life of the connection, whereas this one holds nothing between
/// calls. The BIO's data pointer is the session, unretained: the session owns the `SSL`, which owns
/// the BIO, so the BIO never outlives the session.
enum SessionBIO {
    /// The method table, built once per process and never changed afterwards.
    static let method = Method()

    /// Wraps the `BIO_METHOD *` so it can live in a global.
    struct Method: @unchecked Sendable {
        // @unchecked: the table is written once here and only read by OpenSSL afterwards.

        /// The `BIO_METHOD *`, or nil if OpenSSL could not allocate it (sessions then fail to start).
        let pointer: OpaquePointer?

        init() {
            let type = BIO_get_new_index() | BIO_TYPE_SOURCE_SINK
            guard let method = BIO_meth_new(type, "switchboard session") else {
                pointer = nil
                return
            }
            BIO_meth_set_write(method, SessionBIO.write)
            BIO_meth_set_read(method, SessionBIO.read)
            BIO_meth_set_ctrl(method, SessionBIO.control)
            BIO_meth_set_create(method, { _ in 1 })
            BIO_meth_set_destroy(method, { _ in 1 })
            pointer = method
        }
    }

    /// The session behind a BIO, or nil before `TLSSession.init` has attached it.
    private static func session(_ bio: OpaquePointer?) -> TLSSession? {
        guard let bio, let data = BIO_get_data(bio) else {
            return nil
        }
        return Unmanaged<TLSSession>.fromOpaque(data).takeUnretainedValue()
    }

    /// Appends OpenSSL's records to the session's outbound bytes; never short, never blocks.
    private static let write: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32 = {
        bio, data, length in
        guard let bio, let session = session(bio), let data, length >= 0 else {
            return -1
        }
        COpenSSL_BIO_clear_retry_flags(bio)
        let bytes = UnsafeRawBufferPointer(start: data, count: Int(length))
        if let sealer = session.sealer {
            return session.sealFromOpenSSL(sealer, bytes) ? length : -1
        }
        session.outbound.append(bytes)
        return length
    }

    /// Copies from the ciphertext currently being received; when it is used up, asks OpenSSL
    /// to retry (WANT_READ) rather than reporting end of file, because more may arrive later.
    private static let read: @convention(c) (OpaquePointer?, UnsafeMutablePointer<CChar>?, Int32) -> Int32 = {
        bio, buffer, capacity in
        guard let bio, let session = session(bio), let buffer, capacity > 0 else {
            return 0
        }
        COpenSSL_BIO_clear_retry_flags(bio)
        let available = session.inbound.count - session.inboundOffset
        guard available > 0, let base = session.inbound.baseAddress else {
            COpenSSL_BIO_set_retry_read(bio)
            return -1
        }
        let count = min(available, Int(capacity))
        UnsafeMutableRawPointer(buffer).copyMemory(from: base + session.inboundOffset, byteCount: count)
        session.inboundOffset += count
        return Int32(count)
    }

    /// Answers the few controls OpenSSL asks of a source/sink BIO: flush (always done, the
    /// bytes are already in the output buffer), pending (what is left of the input), the close
    /// flag, and the kernel-TLS hand-over of the write keys to the session's `RecordSealer`
    /// (never the read keys: OpenSSL keeps decrypting). Everything else is unsupported (0).
    private static let control: @convention(c) (OpaquePointer?, Int32, Int, UnsafeMutableRawPointer?) -> Int = {
        bio, command, argument, pointer in
        switch command {
        case COPENSSL_BIO_CTRL_SET_KTLS:
            guard argument != 0, let pointer, let session = session(bio) else {
                return 0
            }
            return session.acceptWriteKeys(pointer) ? 1 : 0
        case BIO_CTRL_GET_KTLS_SEND:
            return session(bio)?.sealer == nil ? 0 : 1
        case COPENSSL_BIO_CTRL_SET_KTLS_TX_SEND_CTRL_MSG:
            session(bio)?.nextRecordType = UInt8(truncatingIfNeeded: argument)
            return 1
        case COPENSSL_BIO_CTRL_CLEAR_KTLS_TX_CTRL_MSG:
            session(bio)?.nextRecordType = RecordSealer.applicationData
            return 1
        case BIO_CTRL_FLUSH:
            return 1
        case BIO_CTRL_PENDING:
            guard let session = session(bio) else {
                return 0
            }
            return session.inbound.count - session.inboundOffset
        case BIO_CTRL_WPENDING:
            return 0
        case BIO_CTRL_GET_CLOSE:
            return Int(BIO_get_shutdown(bio))
        case BIO_CTRL_SET_CLOSE:
            BIO_set_shutdown(bio, Int32(argument))
            return 1
        default:
            return 0
        }
    }
}
