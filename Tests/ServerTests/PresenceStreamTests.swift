import Chat
import Testing
@testable import Server

@Test func aStreamTokenIsValidUntilItExpiresAndOnlyForItsKey() {
    let key = Array("an-admin-token-of-at-least-32-bytes!".utf8)
    let token = StreamToken.issue(key: key, expiresAt: 1000)
    #expect(StreamToken.verify(token, key: key, now: 1000))
    #expect(!StreamToken.verify(token, key: key, now: 1001))
    #expect(!StreamToken.verify(token, key: Array("another-admin-token-of-32-bytes-or-more".utf8), now: 0))
    #expect(!StreamToken.verify("2000" + token.drop { $0 != "." }, key: key, now: 0), "the expiry is signed")
}

@Test func resumingReplaysHeldEventsOfThisProcessOnly() {
    let stream = PresenceStream(epoch: "77", heartbeatMilliseconds: 15_000) { [] }
    for name in ["a", "b", "c"] {
        stream.publish(PresenceChange(place: .room(name), online: 1, joined: ["x"], left: []))
    }
    #expect(stream.missed(after: "77-1")?.count == 2)
    #expect(stream.missed(after: "77-3")?.count == 0)
    #expect(stream.missed(after: "76-1") == nil, "another process's ids")
    #expect(stream.missed(after: "77-4") == nil, "an id from the future")
    #expect(stream.missed(after: "garbage") == nil)
}

@Test func resumingFromBeforeTheHeldEventsNeedsASnapshot() {
    let stream = PresenceStream(epoch: "1", heartbeatMilliseconds: 15_000) { [] }
    for _ in 0..<(PresenceStream.heldEvents + 2) {
        stream.publish(PresenceChange(place: .room("r"), online: 1, joined: [], left: []))
    }
    #expect(stream.missed(after: "1-1") == nil)
    #expect(stream.missed(after: "1-2")?.count == PresenceStream.heldEvents)
}

@Test func eventsAreFramedAsChunks() {
    let chunk = PresenceStream.chunk(Array("data: x\n\n".utf8))
    #expect(Array(chunk.bytes) == Array("9\r\ndata: x\n\n\r\n".utf8))
}
