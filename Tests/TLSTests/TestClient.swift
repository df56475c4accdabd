import Bytes
import COpenSSL
import TLS

/// An OpenSSL client over two memory BIOs, the counterpart of the server `TLSSession` in tests.
///
/// It verifies the server against the development certificate (as a trust anchor) and the
/// host name `localhost`, so a passing handshake proves the certificate is usable.
final class TestClient {
    let context: OpaquePointer
    let ssl: OpaquePointer
    /// Bytes from the server, which the client reads.
    let network: OpaquePointer
    /// Bytes the client writes, for the server.
    let outgoing: OpaquePointer
    var received: [UInt8] = []
    var sawCloseNotify = false

    init(
        trusting certificatePath: String = Fixture.certificate.certificatePath,
        minVersion: Int32 = TLS1_2_VERSION,
        maxVersion: Int32 = TLS1_3_VERSION,
        alpn: [String] = ["http/1.1"]
    ) {
        context = SSL_CTX_new(TLS_client_method())!
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        precondition(SSL_CTX_load_verify_locations(context, certificatePath, nil) == 1)
        if minVersion < TLS1_2_VERSION {
            // OpenSSL 3 only speaks TLS 1.0/1.1 at security level 0; the test needs an old client.
            SSL_CTX_set_security_level(context, 0)
            _ = SSL_CTX_set_cipher_list(context, "DEFAULT@SECLEVEL=0")
        }
        _ = COpenSSL_SSL_CTX_set_min_proto_version(context, minVersion)
        _ = COpenSSL_SSL_CTX_set_max_proto_version(context, maxVersion)
        if !alpn.isEmpty {
            var wire: [UInt8] = []
            for name in alpn {
                wire.append(UInt8(name.utf8.count))
                wire.append(contentsOf: name.utf8)
            }
            precondition(SSL_CTX_set_alpn_protos(context, wire, UInt32(wire.count)) == 0)
        }
        ssl = SSL_new(context)!
        network = BIO_new(BIO_s_mem())!
        outgoing = BIO_new(BIO_s_mem())!
        SSL_set_bio(ssl, network, outgoing)
        precondition(SSL_set1_host(ssl, "localhost") == 1)
        SSL_set_connect_state(ssl)
    }

    deinit {
        SSL_free(ssl)
        SSL_CTX_free(context)
    }

    var isHandshakeComplete: Bool { SSL_is_init_finished(ssl) == 1 }

    var version: String { String(cString: SSL_get_version(ssl)) }

    /// Runs the handshake or reads application data, whichever is due; returns the SSL error
    /// code of the last call (SSL_ERROR_NONE, WANT_READ, ZERO_RETURN, SSL...).
    @discardableResult
    func advance() -> Int32 {
        if !isHandshakeComplete || SSL_in_init(ssl) == 1 {
            let result = SSL_do_handshake(ssl)
            if result != 1 {
                return SSL_get_error(ssl, result)
            }
        }
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            var count = 0
            let result = SSL_read_ex(ssl, &buffer, buffer.count, &count)
            if result == 1 {
                received.append(contentsOf: buffer[0..<count])
                continue
            }
            let code = SSL_get_error(ssl, result)
            if code == SSL_ERROR_ZERO_RETURN {
                sawCloseNotify = true
            }
            return code
        }
    }

    /// Feeds what `TLSSession.takeOutput()` returned (nothing when it was nil).
    func feed(_ chunk: ByteChunk?) {
        feed(chunk?.array ?? [])
    }

    func feed(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        precondition(BIO_write(network, bytes, Int32(bytes.count)) == Int32(bytes.count))
    }

    func takeOutput() -> [UInt8] {
        let length = Int(BIO_ctrl_pending(outgoing))
        guard length > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: length)
        let read = BIO_read(outgoing, &bytes, Int32(length))
        return Array(bytes[0..<Int(max(read, 0))])
    }

    func write(_ bytes: [UInt8]) {
        var count = 0
        precondition(SSL_write_ex(ssl, bytes, bytes.count, &count) == 1 && count == bytes.count)
    }

    /// Sends close_notify; returns SSL_shutdown's result.
    @discardableResult
    func shutdown() -> Int32 {
        SSL_shutdown(ssl)
    }

    var alpn: String? {
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &data, &length)
        guard let data, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }
}

/// Moves bytes between a client and a server session until neither has anything to say.
///
/// - Returns: the plaintext the server received during the exchange.
@discardableResult
func pump(_ client: TestClient, _ server: TLSSession) throws -> [UInt8] {
    var serverReceived: [UInt8] = []
    for _ in 0..<64 {
        client.advance()
        let toServer = client.takeOutput()
        if !toServer.isEmpty {
            let plaintext = try server.receive(toServer)
            serverReceived.append(contentsOf: plaintext)
        }
        let toClient = server.takeOutput()?.array ?? []
        client.feed(toClient)
        if toServer.isEmpty && toClient.isEmpty {
            break
        }
    }
    return serverReceived
}

extension TLSSession {
    /// `receive` for arrays.
    func receive(_ bytes: [UInt8]) throws -> [UInt8] {
        try bytes.withUnsafeBytes { raw in try receive(raw) }
    }

    /// `send` for arrays.
    func send(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { raw in try send(raw) }
    }
}
