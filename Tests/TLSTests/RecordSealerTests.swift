import Bytes
import COpenSSL
import Testing

@testable import TLS

/// A context whose TLS 1.3 sessions leave encryption to OpenSSL, as on versions the sealer is
/// not tested against.
private let openSSLRecordsContext = try! TLSContext(
    certificateChainPath: Fixture.certificate.certificatePath, privateKeyPath: Fixture.certificate.keyPath,
    recordSealing: false)

/// A handshaken pair whose client offers only `suites` (TLS 1.3 names) when given.
private func connectedPair(
    suites: String? = nil, maxVersion: Int32 = TLS1_3_VERSION, context: TLSContext = Fixture.context
) throws -> (TestClient, TLSSession) {
    let client = TestClient(maxVersion: maxVersion)
    if let suites {
        #expect(SSL_set_ciphersuites(client.ssl, suites) == 1)
    }
    let server = try TLSSession(context: context)
    try pump(client, server)
    #expect(server.isHandshakeComplete)
    return (client, server)
}

/// Delivers what the server wrote and returns everything the client has read so far.
private func clientReads(_ client: TestClient, from server: TLSSession) -> [UInt8] {
    client.feed(server.takeOutput())
    client.advance()
    return client.received
}

/// The (content type, length) of each record in a run of TLS records.
private func recordHeaders(_ bytes: [UInt8]) -> [(type: UInt8, length: Int)] {
    var headers: [(type: UInt8, length: Int)] = []
    var offset = 0
    while offset + 5 <= bytes.count {
        #expect(bytes[offset + 1] == 0x03 && bytes[offset + 2] == 0x03)
        let length = Int(bytes[offset + 3]) << 8 | Int(bytes[offset + 4])
        headers.append((bytes[offset], length))
        offset += 5 + length
    }
    #expect(offset == bytes.count)
    return headers
}

private func pattern(_ count: Int, seed: Int = 0) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: ($0 + seed) &* 29 &+ $0 >> 7) }
}

@Test(arguments: ["TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"])
func tls13RecordsAreSealedByTheSessionAndDecryptAtTheClient(suite: String) throws {
    let (client, server) = try connectedPair(suites: suite)
    #expect(String(cString: SSL_CIPHER_get_name(SSL_get_current_cipher(client.ssl))) == suite)
    #expect(server.sealer != nil)
    #expect(server.writeTrafficSecret == nil, "the secret moves into the sealer")
    let message = pattern(40_000)
    try server.send(message)
    #expect(clientReads(client, from: server) == message)
}

@Test func tls12IsStillEncryptedByOpenSSL() throws {
    let (client, server) = try connectedPair(maxVersion: TLS1_2_VERSION)
    #expect(server.protocolVersion == "TLSv1.2")
    #expect(server.sealer == nil)
    let chunks = [ByteChunk(pattern(700)), ByteChunk(pattern(900, seed: 1))]
    let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 1_024, alignment: 16)
    defer { scratch.deallocate() }
    try server.send(chunks, byteCount: 1_600, scratch: scratch)
    #expect(clientReads(client, from: server) == pattern(700) + pattern(900, seed: 1))
}

@Test func queuedChunksBecomeFullRecordsStraightFromTheChunks() throws {
    let (client, server) = try connectedPair()
    let chunks = (0..<3).map { ByteChunk(pattern(10_000, seed: $0)) }
    let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 16, alignment: 16)
    defer { scratch.deallocate() }
    try server.send(chunks, byteCount: 30_000, scratch: scratch)
    let output = try #require(server.takeOutput()).array
    let headers = recordHeaders(output)
    #expect(headers.map(\.type) == [23, 23])
    #expect(headers.map(\.length) == [16_384 + RecordSealer.overhead - 5, 13_616 + RecordSealer.overhead - 5])
    #expect(output.count == RecordSealer.sealedSize(of: 30_000))
    client.feed(output)
    client.advance()
    #expect(client.received == chunks.flatMap(\.array))
}

@Test func closeNotifyAfterSealedDataIsAnAlertTheClientAccepts() throws {
    let (client, server) = try connectedPair()
    try server.send(Array("last words".utf8))
    server.close()
    client.feed(server.takeOutput())
    #expect(client.advance() == SSL_ERROR_ZERO_RETURN)
    #expect(client.received == Array("last words".utf8))
    #expect(client.sawCloseNotify)
}

@Test func aRequestedKeyUpdateMovesOurWriteKeysAlongTwice() throws {
    let (client, server) = try connectedPair()
    try server.send(Array("before".utf8))
    #expect(clientReads(client, from: server) == Array("before".utf8))
    for round in 1...2 {
        #expect(SSL_key_update(client.ssl, SSL_KEY_UPDATE_REQUESTED) == 1)
        client.write(Array("ping \(round)".utf8))
        // The server reads the client's KeyUpdate and owes one back; OpenSSL sends it with the
        // next write, under the old keys, and the sealer then switches (the reply is the first
        // record of the new sequence). The client switches when it reads that KeyUpdate.
        #expect(try pump(client, server) == Array("ping \(round)".utf8))
        #expect(SSL_get_key_update_type(server.ssl) == SSL_KEY_UPDATE_NOT_REQUESTED)
        let reply = Array("after update \(round)".utf8)
        try server.send(reply)
        #expect(SSL_get_key_update_type(server.ssl) == SSL_KEY_UPDATE_NONE)
        #expect(server.sealer?.sequence == 1, "the new keys start a new sequence")
        let received = clientReads(client, from: server)
        #expect(received.suffix(reply.count) == reply[...])
    }
}

@Test func aKeyUpdateThatRequestsNothingLeavesOurKeysAlone() throws {
    let (client, server) = try connectedPair()
    try server.send(Array("one".utf8))
    _ = clientReads(client, from: server)
    let sequence = try #require(server.sealer?.sequence)
    #expect(SSL_key_update(client.ssl, SSL_KEY_UPDATE_NOT_REQUESTED) == 1)
    client.write(Array("ping".utf8))
    #expect(try pump(client, server) == Array("ping".utf8))
    #expect(server.sealer?.sequence == sequence)
    try server.send(Array("two".utf8))
    #expect(clientReads(client, from: server) == Array("onetwo".utf8))
}

@Test func keyUpdateIsFoundAmongHandshakeMessages() {
    func contains(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { TLSSession.containsKeyUpdate($0) }
    }
    #expect(contains([24, 0, 0, 1, 0]))
    #expect(contains([4, 0, 0, 2, 9, 9, 24, 0, 0, 1, 1]))
    #expect(!contains([4, 0, 0, 2, 24, 24]), "a 24 inside a body is not a message type")
    #expect(!contains([]))
}

@Test func keyLogLinesYieldTheirLastHexField() {
    func field(_ line: String) -> [UInt8]? {
        line.withCString { TLSSession.lastHexField($0) }
    }
    #expect(field("SERVER_TRAFFIC_SECRET_0 00aa 00ff10Ab") == [0x00, 0xff, 0x10, 0xab])
    #expect(field("SERVER_TRAFFIC_SECRET_0 00aa 0ff10") == nil, "odd digit count")
    #expect(field("SERVER_TRAFFIC_SECRET_0 00aa 00fg") == nil, "not hex")
    #expect(field("SERVER_TRAFFIC_SECRET_0 00aa ") == nil, "empty field")
}

@Test func theSealerIsUsedOnlyWithTheOpenSSLVersionsItIsTestedAgainst() {
    #expect(RecordSealer.isTested(openSSLVersion: 0x3000_0160))
    #expect(RecordSealer.isTested(openSSLVersion: 0x300F_F0F0))
    #expect(!RecordSealer.isTested(openSSLVersion: 0x3010_0000))
    #expect(!RecordSealer.isTested(openSSLVersion: 0x3020_0010))
    #expect(!RecordSealer.isTested(openSSLVersion: 0x3050_0000))
    #expect(!RecordSealer.isTested(openSSLVersion: 0x1010_1170))
    #expect(TLSContext.sealsRecordsByDefault == RecordSealer.isTested(openSSLVersion: OpenSSL_version_num()))
}

@Test func withoutSealingOpenSSLEncryptsTLS13AndKeepsNoSecret() throws {
    let (client, server) = try connectedPair(context: openSSLRecordsContext)
    #expect(server.protocolVersion == "TLSv1.3")
    #expect(server.sealer == nil)
    #expect(server.writeTrafficSecret == nil, "no key log callback, no secret")
    try server.send(pattern(20_000))
    #expect(clientReads(client, from: server) == pattern(20_000))
}

/// A room fan-out burst as a connection flushes it: several frames through the multi-chunk
/// send path, with the client's KeyUpdate (update_requested) read between two bursts and the
/// reply owed while the next burst goes out.
@Test(arguments: [true, false])
func aClientKeyUpdateInTheMiddleOfAFanOutBurstLosesNothing(sealing: Bool) throws {
    let (client, server) = try connectedPair(context: sealing ? Fixture.context : openSSLRecordsContext)
    #expect((server.sealer != nil) == sealing)
    let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 4 * 16_384, alignment: 16)
    defer { scratch.deallocate() }
    var expected: [UInt8] = []
    func burst(_ seed: Int) throws {
        let chunks = (0..<40).map { ByteChunk(pattern(530, seed: seed * 40 + $0)) }
        try server.send(chunks, byteCount: 40 * 530, scratch: scratch)
        expected += chunks.flatMap(\.array)
    }
    try burst(0)
    client.feed(server.takeOutput())
    client.advance()
    try burst(1)
    #expect(SSL_key_update(client.ssl, SSL_KEY_UPDATE_REQUESTED) == 1)
    client.write(Array("ping".utf8))
    #expect(try server.receive(client.takeOutput()) == Array("ping".utf8))
    #expect(SSL_get_key_update_type(server.ssl) == SSL_KEY_UPDATE_NOT_REQUESTED)
    for seed in 2..<5 { try burst(seed) }
    #expect(SSL_get_key_update_type(server.ssl) == SSL_KEY_UPDATE_NONE, "our KeyUpdate went out")
    if sealing { #expect(try #require(server.sealer).sequence <= 6, "the burst after it is under the new keys") }
    #expect(clientReads(client, from: server) == expected)
}

@Test(arguments: [true, false])
func weSendAKeyUpdateOfOurOwnBeforeTheRecordLimit(sealing: Bool) throws {
    let (client, server) = try connectedPair(context: sealing ? Fixture.context : openSSLRecordsContext)
    server.keyUpdateInterval = 4
    var expected: [UInt8] = []
    var updates = 0
    var previous: UInt64 = 0
    for round in 0..<10 {
        let message = pattern(20_000, seed: round)
        try server.send(message)
        expected += message
        let used = server.sealer?.sequence ?? server.recordsUnderKey
        if used < previous { updates += 1 }
        previous = used
        #expect(used <= server.keyUpdateInterval, "never past the interval")
    }
    #expect(updates >= 3, "the keys moved on every few records")
    #expect(clientReads(client, from: server) == expected)
}

@Test func closingWipesTheWriteKeys() throws {
    let (client, server) = try connectedPair()
    try server.send(Array("bye".utf8))
    server.close()
    #expect(try #require(server.sealer).isRetired)
    #expect(throws: TLSError.self) { try server.send(Array("more".utf8)) }
    client.feed(server.takeOutput())
    #expect(client.advance() == SSL_ERROR_ZERO_RETURN)
    #expect(client.received == Array("bye".utf8))
}
