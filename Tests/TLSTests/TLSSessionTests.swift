import COpenSSL
import Testing
import TLS

/// A handshaken client and server pair.
private func connectedPair(maxVersion: Int32 = TLS1_3_VERSION) throws -> (TestClient, TLSSession) {
    let client = TestClient(maxVersion: maxVersion)
    let server = try TLSSession(context: Fixture.context)
    try pump(client, server)
    return (client, server)
}

/// Runs the handshake and returns the error the server threw, or nil.
private func handshakeError(_ client: TestClient) throws -> TLSError? {
    let server = try TLSSession(context: Fixture.context)
    do {
        try pump(client, server)
        return nil
    } catch let error as TLSError {
        return error
    }
}

/// A byte pattern that makes misordered or dropped bytes visible.
private func pattern(_ count: Int) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
}

@Test func handshakeCompletesWithTLS13() throws {
    let (client, server) = try connectedPair()
    #expect(server.isHandshakeComplete)
    #expect(client.isHandshakeComplete)
    #expect(server.protocolVersion == "TLSv1.3")
    #expect(client.version == "TLSv1.3")
}

@Test func handshakeCompletesWithTLS12() throws {
    let (client, server) = try connectedPair(maxVersion: TLS1_2_VERSION)
    #expect(server.isHandshakeComplete)
    #expect(server.protocolVersion == "TLSv1.2")
    #expect(client.version == "TLSv1.2")
    let cipher = String(cString: SSL_CIPHER_get_name(SSL_get_current_cipher(client.ssl)))
    #expect(cipher.hasPrefix("ECDHE-") && (cipher.contains("GCM") || cipher.contains("CHACHA20")))
}

/// The cipher both sides settle on for a client offering `offer`: TLS 1.3 suites by default, or
/// a TLS 1.2 cipher list with `maxVersion: TLS1_2_VERSION`; nil keeps OpenSSL's default list,
/// which puts AES-256-GCM first.
private func negotiatedCipher(offer: String?, maxVersion: Int32 = TLS1_3_VERSION) throws -> String {
    let client = TestClient(maxVersion: maxVersion)
    if let offer {
        let accepted = maxVersion == TLS1_3_VERSION
            ? SSL_set_ciphersuites(client.ssl, offer) : SSL_set_cipher_list(client.ssl, offer)
        #expect(accepted == 1)
    }
    let server = try TLSSession(context: Fixture.context)
    try pump(client, server)
    #expect(server.isHandshakeComplete)
    return String(cString: SSL_CIPHER_get_name(SSL_get_current_cipher(client.ssl)))
}

@Test func serverPrefersAES128GCMOverTheClientsAES256() throws {
    #expect(try negotiatedCipher(offer: nil) == "TLS_AES_128_GCM_SHA256")
}

@Test func clientsThatPutChaCha20FirstGetIt() throws {
    let suites = "TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256"
    #expect(try negotiatedCipher(offer: suites) == "TLS_CHACHA20_POLY1305_SHA256")
}

@Test func clientsOfferingOnlyAES256StillConnect() throws {
    #expect(try negotiatedCipher(offer: "TLS_AES_256_GCM_SHA384") == "TLS_AES_256_GCM_SHA384")
}

@Test func tls12ServerPrefersAES128GCMAndAcceptsEachAEADAlone() throws {
    for (offer, expected) in [
        ("ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256"),
        ("ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-ECDSA-AES256-GCM-SHA384"),
        ("ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-ECDSA-CHACHA20-POLY1305"),
    ] {
        #expect(try negotiatedCipher(offer: offer, maxVersion: TLS1_2_VERSION) == expected)
    }
}

@Test func tls12ClientOfferingOnlyCBCCiphersIsRefused() throws {
    let client = TestClient(maxVersion: TLS1_2_VERSION)
    // Usable with the ECDSA certificate, so only the server's AEAD-only policy can refuse them.
    #expect(SSL_set_cipher_list(client.ssl, "ECDHE-ECDSA-AES128-SHA:ECDHE-ECDSA-AES256-SHA384") == 1)
    let error = try #require(try handshakeError(client))
    #expect(error.description.contains("no shared cipher"))
}

@Test func alpnSelectsHTTP11() throws {
    let client = TestClient(alpn: ["h2", "http/1.1"])
    let server = try TLSSession(context: Fixture.context)
    try pump(client, server)
    #expect(server.alpnProtocol == "http/1.1")
    #expect(client.alpn == "http/1.1")
}

@Test func clientOfferingNoALPNIsAccepted() throws {
    let client = TestClient(alpn: [])
    let server = try TLSSession(context: Fixture.context)
    try pump(client, server)
    #expect(server.isHandshakeComplete)
    #expect(server.alpnProtocol == nil)
}

@Test func clientOfferingOnlyOtherProtocolsIsRefused() throws {
    let error = try #require(try handshakeError(TestClient(alpn: ["h2"])))
    #expect(error.kind == .handshake)
}

@Test func handshakeSurvivesOneByteAtATime() throws {
    let client = TestClient()
    let server = try TLSSession(context: Fixture.context)
    for _ in 0..<16 {
        client.advance()
        for byte in client.takeOutput() {
            #expect(try server.receive([byte]).isEmpty)
        }
        client.feed(server.takeOutput())
    }
    #expect(server.isHandshakeComplete)
    #expect(client.isHandshakeComplete)
}

@Test func applicationDataFlowsBothWays() throws {
    let (client, server) = try connectedPair()
    client.write(Array("hello".utf8))
    #expect(try pump(client, server) == Array("hello".utf8))
    try server.send(Array("world".utf8))
    #expect(server.hasOutput)
    client.feed(server.takeOutput())
    #expect(!server.hasOutput)
    client.advance()
    #expect(client.received == Array("world".utf8))
}

@Test func oneMebibyteCrossesInBothDirectionsInOddSlices() throws {
    let (client, server) = try connectedPair()
    let message = pattern(1 << 20)
    client.write(message)
    let ciphertext = client.takeOutput()
    var received: [UInt8] = []
    // 7,001-byte slices cut records in awkward places, exercising partially held records.
    var start = 0
    while start < ciphertext.count {
        let end = min(start + 7_001, ciphertext.count)
        received += try server.receive(Array(ciphertext[start..<end]))
        start = end
    }
    #expect(received.count == message.count)
    let receivedIntact = received == message  // a Bool, so a failure does not print 1 MiB
    #expect(receivedIntact)

    try server.send(message)
    client.feed(server.takeOutput())
    client.advance()
    let sentIntact = client.received == message
    #expect(sentIntact)
}

@Test func wholeMebibyteInOneReceiveDecryptsAtOnce() throws {
    let (client, server) = try connectedPair(maxVersion: TLS1_2_VERSION)
    let message = pattern(1 << 20)
    client.write(message)
    let decrypted = try server.receive(client.takeOutput())
    let intact = decrypted == message  // a Bool, so a failure does not print 1 MiB
    #expect(intact)
}

@Test func dataSentBeforeTheHandshakeIsDeliveredAfterIt() throws {
    let client = TestClient()
    let server = try TLSSession(context: Fixture.context)
    try server.send(Array("early".utf8))
    #expect(!server.hasOutput)
    try pump(client, server)
    client.advance()
    #expect(client.received == Array("early".utf8))
}

@Test func tls11ClientIsRefused() throws {
    let error = try #require(try handshakeError(TestClient(minVersion: TLS1_1_VERSION, maxVersion: TLS1_1_VERSION)))
    #expect(error.kind == .handshake)
    #expect(error.description.contains("unsupported protocol"))
}

@Test func plaintextHTTPIsAnErrorNotACrash() throws {
    let server = try TLSSession(context: Fixture.context)
    #expect {
        try server.receive(Array("GET / HTTP/1.1\r\n\r\n".utf8))
    } throws: { error in
        (error as? TLSError)?.kind == .notTLS
    }
    // The session stays failed, and says so again rather than crashing.
    #expect(throws: TLSError.self) { try server.receive(Array("more".utf8)) }
    #expect(throws: TLSError.self) { try server.send(Array("reply".utf8)) }
    server.close()
}

@Test func garbageBeforeTheHandshakeThrows() throws {
    let server = try TLSSession(context: Fixture.context)
    #expect {
        try server.receive(pattern(200))
    } throws: { error in
        (error as? TLSError)?.kind == .handshake
    }
}

@Test func forgedRecordAfterTheHandshakeThrows() throws {
    let (_, server) = try connectedPair()
    // An application-data record header with a body that cannot authenticate.
    let forged: [UInt8] = [0x17, 0x03, 0x03, 0x00, 0x40] + pattern(64)
    #expect {
        try server.receive(forged)
    } throws: { error in
        (error as? TLSError)?.kind == .protocol
    }
}

@Test func renegotiationIsRefused() throws {
    let (client, server) = try connectedPair(maxVersion: TLS1_2_VERSION)
    #expect(SSL_renegotiate(client.ssl) == 1)
    client.advance()
    #expect {
        try server.receive(client.takeOutput())
    } throws: { error in
        (error as? TLSError)?.kind == .renegotiation
    }
}

@Test func clientCloseNotifyIsSeenAndAnswered() throws {
    let (client, server) = try connectedPair()
    client.write(Array("bye".utf8))
    client.shutdown()
    #expect(try server.receive(client.takeOutput()) == Array("bye".utf8))
    #expect(server.peerClosed)
    server.close()
    client.feed(server.takeOutput())
    #expect(client.advance() == SSL_ERROR_ZERO_RETURN)
    #expect(client.sawCloseNotify)
}

@Test func serverCloseSendsCloseNotifyOnceAndStopsSending() throws {
    let (client, server) = try connectedPair()
    server.close()
    let alert = try #require(server.takeOutput())
    #expect(alert.count > 0)
    server.close()
    #expect(!server.hasOutput)
    #expect(throws: TLSError.self) { try server.send(Array("late".utf8)) }
    client.feed(alert)
    #expect(client.advance() == SSL_ERROR_ZERO_RETURN)
}

@Test func closeDuringTheHandshakeSendsNothing() throws {
    let server = try TLSSession(context: Fixture.context)
    server.close()
    #expect(!server.hasOutput)
    #expect(server.takeOutput() == nil)
}

/// Steps a handshake by hand and records, for each of the server's answers, whether it had output
/// and whether that output was urgent.
private func handshakeUrgency(maxVersion: Int32) throws -> [(output: Bool, urgent: Bool)] {
    let client = TestClient(maxVersion: maxVersion)
    let server = try TLSSession(context: Fixture.context)
    var answers: [(output: Bool, urgent: Bool)] = []
    while !server.isHandshakeComplete {
        client.advance()
        _ = try server.receive(client.takeOutput())
        answers.append((server.hasOutput, server.hasUrgentOutput))
        client.feed(server.takeOutput())
    }
    return answers
}

@Test func tls13TicketsWaitForTheFirstResponseButTheServerFlightDoesNot() throws {
    let answers = try handshakeUrgency(maxVersion: TLS1_3_VERSION)
    #expect(answers.count == 2)
    #expect(answers.first! == (output: true, urgent: true))
    // The client's Finished completes the handshake; OpenSSL answers with session tickets.
    #expect(answers.last! == (output: true, urgent: false))
}

@Test func tls12FinalFlightIsUrgent() throws {
    let answers = try handshakeUrgency(maxVersion: TLS1_2_VERSION)
    #expect(answers.allSatisfy { !$0.output || $0.urgent })
    #expect(answers.last!.output)
}

@Test func deferredTicketsGoOutAheadOfTheFirstResponse() throws {
    let client = TestClient(maxVersion: TLS1_3_VERSION)
    let server = try TLSSession(context: Fixture.context)
    while !server.isHandshakeComplete {
        client.advance()
        _ = try server.receive(client.takeOutput())
        if server.hasUrgentOutput { client.feed(server.takeOutput()) }
    }
    try server.send(Array("HTTP/1.1 101 Switching Protocols\r\n\r\n".utf8))
    client.feed(server.takeOutput())
    client.advance()
    #expect(String(decoding: client.received, as: UTF8.self) == "HTTP/1.1 101 Switching Protocols\r\n\r\n")
    #expect(SSL_SESSION_is_resumable(SSL_get_session(client.ssl)) == 1)
}
