import JSON
import Testing
@testable import Chat

@Test func compactionKeepsMessagesThatAreNotYetDurable() throws {
    let h = try Harness()
    let ada = h.user("ada")
    let gid = JSONValue.string(h.group("Team", owner: ada.client))
    h.call(ada.client, ["op": "send", "group": gid, "text": "durable"])
    let request: JSONValue = ["op": "send", "id": "p", "group": gid, "text": "pending"]
    h.service.received(ada.client, text: request.serialized)
    // The second message is appended but its completion has not run: it is not in the state.
    #expect(h.service.state.messages[gid.stringValue ?? ""]?.count == 1)
    h.store.compact()
    h.settle()
    try h.restart()
    let texts = h.service.state.messages[gid.stringValue ?? ""]?.messages.map(\.text)
    #expect(texts == ["durable", "pending"])
}

@Test func aFailedWriteAnswersUnavailable() throws {
    let h = try Harness()
    let ada = h.user("ada")
    let gid = JSONValue.string(h.group("Team", owner: ada.client))
    let request: JSONValue = ["op": "send", "id": "f", "group": gid, "text": "lost"]
    h.service.received(ada.client, text: request.serialized)
    h.service.failed(through: UInt64.max)
    let reply = h.transport.take(ada.client).first
    #expect(reply?.code == "unavailable")
    #expect(reply?["id"] == "f")
    #expect(h.service.state.messages[gid.stringValue ?? ""]?.count ?? 0 == 0)
}

/// Sends `count` messages numbered from `from` to group `gid` as `client`.
private func send(_ h: Harness, _ client: FakeClient, _ gid: String, _ range: Range<Int>) {
    for number in range {
        h.advance(1)
        h.call(client, ["op": "send", "group": .string(gid), "text": .string("n\(number)")])
    }
}

/// Every message of the group, oldest first, paging back with `before` `limit` at a time.
private func fullHistory(_ h: Harness, _ client: FakeClient, _ gid: String, limit: Int) -> [String] {
    var page = h.call(client, ["op": "history", "group": .string(gid), "limit": .integer(Int64(limit))])
    var texts = page["messages"]?.arrayValue?.compactMap { $0["text"]?.stringValue } ?? []
    while page["more"] == true, let oldest = page["messages"]?[0]?["id"] {
        page = h.call(client, ["op": "history", "group": .string(gid), "before": oldest, "limit": .integer(Int64(limit))])
        texts = (page["messages"]?.arrayValue?.compactMap { $0["text"]?.stringValue } ?? []) + texts
    }
    return texts
}

@Test func aCheckpointDropsStoredMessagesFromMemoryAndPagesReadThemBack() throws {
    let h = try Harness()
    let ada = h.user("ada")
    let gid = h.group("Team", owner: ada.client)
    send(h, ada.client, gid, 0..<20)
    h.checkpoint()
    let log = try #require(h.service.state.messages[gid])
    #expect(log.count == Harness.recentMessages)
    #expect(log.olderOnDisk == 20 - Harness.recentMessages)
    send(h, ada.client, gid, 20..<25)
    #expect(fullHistory(h, ada.client, gid, limit: 4) == (0..<25).map { "n\($0)" })
    #expect(fullHistory(h, ada.client, gid, limit: 200) == (0..<25).map { "n\($0)" })
}

@Test func historyAfterAnOldIdAndSubscribeSinceReadTheDisk() throws {
    let h = try Harness()
    let ada = h.user("ada")
    let gid = h.group("Team", owner: ada.client)
    send(h, ada.client, gid, 0..<12)
    try h.restart()
    let again = h.connect("ada-again", token: ada.token)
    let first = h.call(again, ["op": "history", "group": .string(gid), "before": "zzzzzzzz", "limit": 12])
    let ids = first["messages"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
    #expect(ids.count == 12)
    let after = h.call(again, ["op": "history", "group": .string(gid), "after": .string(ids[2]), "limit": 4])
    #expect(after["messages"]?.arrayValue?.compactMap { $0["text"]?.stringValue } == ["n3", "n4", "n5", "n6"])
    #expect(after["more"] == true)
    let subscribed = h.call(again, ["op": "subscribe", "group": .string(gid), "since": .string(ids[7])])
    #expect(subscribed["messages"]?.arrayValue?.compactMap { $0["text"]?.stringValue } == ["n8", "n9", "n10", "n11"])
    #expect(subscribed["more"] == false)
}

@Test func aReceiptOnAMessageOnlyOnDiskIsStoredAndShown() throws {
    let h = try Harness()
    let ada = h.user("ada")
    let gid = h.group("Team", owner: ada.client)
    send(h, ada.client, gid, 0..<10)
    let oldest = h.call(ada.client, ["op": "history", "group": .string(gid), "limit": 10])["messages"]?[0]?["id"] ?? .null
    h.checkpoint()
    #expect(h.service.state.messages[gid]?.index(of: oldest.stringValue ?? "") == nil, "the oldest message left memory")
    #expect(h.call(ada.client, ["op": "receipt", "group": .string(gid), "message": oldest]).isOK)
    #expect(h.call(ada.client, ["op": "receipt", "group": .string(gid), "message": "-nope"]).code == "not_found")
    let shown = h.call(ada.client, ["op": "history", "group": .string(gid), "limit": 10])["messages"]?[0]
    #expect(shown?["receivedBy"]?[ada.id] != nil)
    h.checkpoint()
    try h.restart()
    let again = h.connect("ada-again", token: ada.token)
    let reloaded = h.call(again, ["op": "history", "group": .string(gid), "limit": 10])["messages"]?[0]
    #expect(reloaded?["id"] == oldest)
    #expect(reloaded?["receivedBy"]?[ada.id] != nil)
}

/// Ada and Bob in group "Team", where Ada sent "old" (`clientId` "c-old") and ten messages
/// after it; a checkpoint then moved "old" out of memory with its window, so only the segments
/// and the store's index know it. Returns the first send's reply.
private func messageOnlyOnDisk(_ h: Harness) throws -> (ada: Harness.User, bob: Harness.User, gid: String, first: JSONValue) {
    let ada = h.user("ada")
    let bob = h.user("bob")
    let gid = h.group("Team", owner: ada.client, members: [bob.client])
    let first = h.call(ada.client, ["op": "send", "group": .string(gid), "text": "old", "clientId": "c-old"])
    let id = try #require(first["message"]?["id"]?.stringValue)
    send(h, ada.client, gid, 0..<10)
    h.checkpoint()
    #expect(h.service.state.messages[gid]?.index(of: id) == nil)
    #expect(h.service.state.sentByClient[ClientMessageKey(user: ada.id, clientId: "c-old")] == nil)
    return (ada, bob, gid, first)
}

@Test func aResendOfAMessageOnlyOnDiskAnswersItAfterTheWindowMovedAndAfterARestart() throws {
    let h = try Harness()
    let (ada, bob, gid, first) = try messageOnlyOnDisk(h)
    _ = h.events(bob.client)
    let journal = h.store.journalBytes
    let resend: JSONValue = ["op": "send", "group": .string(gid), "text": "old", "clientId": "c-old"]
    #expect(h.call(ada.client, resend)["message"] == first["message"])
    #expect(h.events(bob.client).isEmpty)
    #expect(h.store.journalBytes == journal)
    #expect(h.service.state.messages[gid]?.total == 11)
    let other = h.group("Other", owner: ada.client)
    #expect(h.call(ada.client, ["op": "send", "group": .string(other), "text": "old", "clientId": "c-old"]).code == "conflict")
    try h.restart()
    let again = h.connect("ada", token: ada.token)
    #expect(h.call(again, resend)["message"] == first["message"])
    #expect(h.service.state.messages[gid]?.total == 11)
    // A clientId nobody used is stored as a new message.
    let fresh = h.call(again, ["op": "send", "group": .string(gid), "text": "new", "clientId": "c-new"])
    #expect(fresh["message"]?["text"] == "new")
    #expect(h.service.state.messages[gid]?.total == 12)
}

@Test func sendsBehindOneWhoseClientIdIsLookedUpOnDiskAreStoredAfterItInTheirOrder() throws {
    let h = try Harness()
    let (ada, bob, gid, first) = try messageOnlyOnDisk(h)
    #expect(h.call(bob.client, ["op": "subscribe", "group": .string(gid), "limit": 1]).isOK)
    _ = h.events(bob.client)
    // In one read of the socket: a resend looked up on disk, then two new messages.
    h.service.received(ada.client, text: Array(#"{"op":"send","id":"r1","group":"\#(gid)","text":"old","clientId":"c-old"}"#.utf8))
    h.service.received(ada.client, text: Array(#"{"op":"send","id":"r2","group":"\#(gid)","text":"next","clientId":"c-next"}"#.utf8))
    h.service.received(ada.client, text: Array(#"{"op":"send","id":"r3","group":"\#(gid)","text":"last"}"#.utf8))
    #expect(!h.service.hasPendingWrites, "a send stored ahead of one read before it")
    h.settle()
    let replies = h.transport.take(ada.client).filter { $0["id"] != nil }
    #expect(replies.map { $0["id"] } == ["r1", "r2", "r3"])
    #expect(replies.first?["message"] == first["message"])
    #expect(Array(fullHistory(h, ada.client, gid, limit: 50).suffix(3)) == ["n9", "next", "last"])
    #expect(h.events(bob.client).filter { $0["op"] == "message" }.map { $0["message"]?["text"] } == ["next", "last"])
    // A held send is checked again in its turn, as the read is: a leave that ran meanwhile
    // refuses both.
    h.service.received(ada.client, text: Array(#"{"op":"send","id":"r4","group":"\#(gid)","text":"old","clientId":"c-old"}"#.utf8))
    h.service.received(ada.client, text: Array(#"{"op":"send","id":"r5","group":"\#(gid)","text":"held"}"#.utf8))
    h.service.received(ada.client, text: Array(#"{"op":"leave","id":"l","group":"\#(gid)"}"#.utf8))
    h.settle()
    let answers = h.transport.take(ada.client).filter { $0["id"] != nil }
    #expect(answers.filter { $0["id"] == "r4" || $0["id"] == "r5" }.map(\.code) == ["forbidden", "forbidden"])
    #expect(!fullHistory(h, bob.client, gid, limit: 50).contains("held"))
}

@Test func aMessageThatStaysInMemoryAfterACheckpointIsStillFoundByItsClientId() throws {
    let h = try Harness()
    let ada = h.user("ada")
    let gid = h.group("Team", owner: ada.client)
    send(h, ada.client, gid, 0..<10)
    let kept = h.call(ada.client, ["op": "send", "group": .string(gid), "text": "kept", "clientId": "c-kept"])
    let id = try #require(kept["message"]?["id"]?.stringValue)
    h.checkpoint()
    // Only the messages that left memory leave the clientId index.
    #expect(h.service.state.messages[gid]?.index(of: id) != nil)
    #expect(h.service.state.sentByClient[ClientMessageKey(user: ada.id, clientId: "c-kept")]?.id == id)
    let resend: JSONValue = ["op": "send", "group": .string(gid), "text": "kept", "clientId": "c-kept"]
    #expect(h.call(ada.client, resend)["message"] == kept["message"])
    #expect(h.service.state.messages[gid]?.total == 11)
}

@Test func retentionDeletesSealedSegmentsAndTheirMessagesLeaveMemoryAndHistory() throws {
    let h = try Harness(segmentBytes: 600) { $0.retentionMessages = 5 }
    let ada = h.user("ada")
    let gid = h.group("Team", owner: ada.client)
    // The first checkpoint deletes messages still in memory; the later ones, after the window
    // has moved on, ones only on disk.
    var kept: [String] = []
    var sent = 0
    for count in [40, 6, 6, 6] {
        send(h, ada.client, gid, sent..<sent + count)
        sent += count
        h.checkpoint()
        kept = fullHistory(h, ada.client, gid, limit: 4)
        #expect(kept.count >= 5)
        #expect(kept.count < 20)
        #expect(kept == (sent - kept.count..<sent).map { "n\($0)" })
        #expect(h.service.state.messages[gid]?.total == kept.count)
    }
    try h.restart()
    #expect(fullHistory(h, h.connect("ada", token: ada.token), gid, limit: 4) == kept)
}

@Test func aRequestAnsweredAfterADiskReadIsRefusedWhenALeaveOnItsConnectionCameFirst() throws {
    let h = try Harness()
    let ada = h.user("ada")
    let bob = h.user("bob")
    let gid = h.group("Team", owner: ada.client, members: [bob.client])
    #expect(h.call(bob.client, ["op": "send", "group": .string(gid), "text": "mine", "clientId": "bob-1"]).isOK)
    send(h, ada.client, gid, 0..<10)
    h.checkpoint()
    #expect(h.service.state.messages[gid]?.olderOnDisk ?? 0 > 0)
    // Both in one read of the socket: the subscribe's page (since the start) is read off the
    // loop, and the leave runs before that read is done.
    h.service.received(bob.client, text: Array(#"{"op":"subscribe","id":"s","group":"\#(gid)","since":""}"#.utf8))
    h.service.received(bob.client, text: Array(#"{"op":"leave","id":"l","group":"\#(gid)"}"#.utf8))
    h.settle()
    let replies = h.transport.take(bob.client).filter { $0["id"] != nil }
    #expect(replies.first { $0["id"] == "l" }?["op"] == "ok")
    #expect(replies.first { $0["id"] == "s" }?.code == "forbidden")
    send(h, ada.client, gid, 10..<11)
    #expect(!h.events(bob.client).contains { $0["op"] == "message" }, "a former member gets the group's messages")
    let online = h.call(ada.client, ["op": "subscribe", "group": .string(gid)])["group"]?["online"]?.arrayValue ?? []
    #expect(!online.contains(.string(bob.id)))
    // The same for a page of history read off disk: back in, then out before it is answered.
    let code = h.call(ada.client, ["op": "invite", "group": .string(gid)])["invite"] ?? .null
    #expect(h.call(bob.client, ["op": "join", "invite": code]).isOK)
    h.service.received(bob.client, text: Array(#"{"op":"history","id":"h","group":"\#(gid)","before":"zzzz","limit":10}"#.utf8))
    h.service.received(bob.client, text: Array(#"{"op":"leave","id":"l2","group":"\#(gid)"}"#.utf8))
    h.settle()
    #expect(h.transport.take(bob.client).first { $0["id"] == "h" }?.code == "forbidden")
    // And for a resend whose `clientId` is looked up on disk.
    #expect(h.call(bob.client, ["op": "join", "invite": code]).isOK)
    h.service.received(bob.client, text: Array(#"{"op":"send","id":"r","group":"\#(gid)","text":"mine","clientId":"bob-1"}"#.utf8))
    h.service.received(bob.client, text: Array(#"{"op":"leave","id":"l3","group":"\#(gid)"}"#.utf8))
    h.settle()
    #expect(h.transport.take(bob.client).first { $0["id"] == "r" }?.code == "forbidden")
}
