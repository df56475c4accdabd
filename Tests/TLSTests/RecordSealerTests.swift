import Bytes
import COpenSSL
import Testing

@testable import TLS

/// A handshaken pair whose client offers only `suites` (TLS 1.3 names) when given.
private func connectedPair(suites: String? = nil, maxVersion: Int32 = TLS1_3_VERSION) throws -> (TestClient, TLSSession) {
    let client = TestClient(maxVersion: maxVersion)
    if let suites {
        #expect(SSL_set_ciphersuites(client.ssl, suites) == 1)
    }
    let server = try TLSSession(context: Fixture.context)
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
