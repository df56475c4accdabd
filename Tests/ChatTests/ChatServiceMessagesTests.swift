import JSON
import Testing
@testable import Chat

/// Ada and Bob in one group, both subscribed.
private func pair() throws -> (Harness, ada: FakeClient, bob: FakeClient, gid: JSONValue) {
    let h = try Harness()
    let ada = h.user("ada")
    let bob = h.user("bob")
    let gid = JSONValue.string(h.group("Team", owner: ada.client, members: [bob.client]))
    h.call(ada.client, ["op": "subscribe", "group": gid])
    h.call(bob.client, ["op": "subscribe", "group": gid])
    h.service.flushPresence()
    _ = h.events(ada.client)
    _ = h.events(bob.client)
    return (h, ada.client, bob.client, gid)
}

/// Sends `count` numbered messages and returns their ids.
private func fill(_ h: Harness, _ client: FakeClient, _ gid: JSONValue, _ count: Int) -> [JSONValue] {
    (0..<count).map { index in
        h.call(client, ["op": "send", "group": gid, "text": .string("m\(index)")])["message"]?["id"] ?? .null
    }
}

@Test func sendRepliesWithTheMessageAndEchoesTheClientId() throws {
    let (h, ada, _, gid) = try pair()
    let reply = h.call(ada, ["op": "send", "group": gid, "text": "hello", "clientId": "c-1"])
    #expect(reply["message"]?["text"] == "hello")
    #expect(reply["message"]?["clientId"] == "c-1")
    #expect(reply["message"]?["group"] == gid)
    #expect(reply["message"]?["id"]?.stringValue?.utf8.count == 20)
}

@Test func messageEventGoesToOtherSubscribersButNotTheSender() throws {
    let (h, ada, bob, gid) = try pair()
    let reply = h.call(ada, ["op": "send", "group": gid, "text": "hello"])
    #expect(h.events(ada).isEmpty)
    #expect(h.events(bob) == [["op": "message", "group": gid, "message": reply["message"] ?? .null]])
}

@Test func anAcknowledgementSaysWhereItsMessageLiesForTheEvent() throws {
    let message = ChatMessage(id: "-Nabcdefghijklmnopqr", user: "ada", text: "a \"quoted\" line", imageUrl: nil, createdAt: 7)
    let ack = ChatService<FakeTransport>.acknowledgement(.integer(3), message, group: "g")
    let messageJSON = ChatService<FakeTransport>.json(message, group: "g")
    #expect(Array(ack.bytes[ack.message]) == messageJSON)
    #expect(try JSONValue.parse(ack.bytes) == ["op": "ok", "id": 3, "message": JSONValue.parse(messageJSON)])
}

@Test func aPlainAcknowledgementIsByteForByteTheWrittenOne() throws {
    typealias Service = ChatService<FakeTransport>
    let plain = [
        ChatMessage(id: "-Nabcdefghijklmnopqr", user: "-Nu", text: "an ordinary message", imageUrl: nil, createdAt: 1_795_788_195_509),
        ChatMessage(id: "m", user: "u", text: "caf\u{E9} \u{1F600}", imageUrl: nil, createdAt: 0, clientId: "c-1"),
        ChatMessage(id: "m", user: "u", text: nil, imageUrl: "https://i.example/x.png", createdAt: -3),
        // Every field at once and the longest numbers: the most text around the values.
        ChatMessage(id: "", user: "", text: "", imageUrl: "", createdAt: .min, clientId: ""),
    ]
    for message in plain {
        for id: JSONValue? in [nil, .integer(3), .integer(-70), .integer(.min)] {
            let fast = try #require(message.plainAcknowledgement(id, group: "g1"))
            let slow = Service.writtenAcknowledgement(id, message, group: "g1")
            #expect(fast.bytes == slow.bytes)
            #expect(fast.message == slow.message)
            #expect(fast.written == slow.written)
            #expect(Service.acknowledgement(id, message, group: "g1").bytes == slow.bytes)
        }
    }
    // Escapes, a string or fractional request id, receipts: written field by field.
    let quoted = ChatMessage(id: "m", user: "u", text: "say \"hi\"", imageUrl: nil, createdAt: 1)
    let control = ChatMessage(id: "m", user: "u", text: "two\nlines", imageUrl: nil, createdAt: 1)
    let received = ChatMessage(id: "m", user: "u", text: "t", imageUrl: nil, createdAt: 1, receivedBy: ["v": 2])
    #expect(quoted.plainAcknowledgement(.integer(1), group: "g") == nil)
    #expect(control.plainAcknowledgement(.integer(1), group: "g") == nil)
    #expect(received.plainAcknowledgement(.integer(1), group: "g") == nil)
    #expect(plain[0].plainAcknowledgement(.string("r1"), group: "g") == nil)
    #expect(plain[0].plainAcknowledgement(.number(1.5), group: "g") == nil)
    #expect(plain[0].plainAcknowledgement(nil, group: "g\\1") == nil)
    for message in [quoted, control, received] {
        let ack = Service.acknowledgement(.string("r\"1"), message, group: "g")
        #expect(ack.bytes == Service.writtenAcknowledgement(.string("r\"1"), message, group: "g").bytes)
        #expect(try JSONValue.parse(Array(ack.bytes[ack.message])) == JSONValue.parse(Service.json(message, group: "g")))
    }
}

@Test func messageIsNotVisibleBeforeItIsDurable() throws {
    let (h, ada, bob, gid) = try pair()
    let request: JSONValue = ["op": "send", "id": 1, "group": gid, "text": "pending"]
    h.service.received(ada, text: request.serialized)
    #expect(h.transport.take(ada).isEmpty)
    #expect(h.transport.take(bob).isEmpty)
    h.settle()
    #expect(h.transport.take(ada).first?["op"] == "ok")
    #expect(h.events(bob).count == 1)
}

@Test func imageMessagesNeedAnHTTPURL() throws {
    let (h, ada, _, gid) = try pair()
    let image = h.call(ada, ["op": "send", "group": gid, "imageUrl": "https://img.example/cat.png"])
    #expect(image["message"]?["imageUrl"] == "https://img.example/cat.png")
    #expect(image["message"]?["text"] == nil)
    #expect(h.call(ada, ["op": "send", "group": gid, "imageUrl": "file:///etc/passwd"]).code == "bad_request")
    #expect(h.call(ada, ["op": "send", "group": gid, "text": "a", "imageUrl": "https://x.example/"]).code == "bad_request")
    #expect(h.call(ada, ["op": "send", "group": gid]).code == "bad_request")
}

@Test func overlongTextIsTooLarge() throws {
    let (h, ada, _, gid) = try pair()
    let text = String(repeating: "x", count: 16 * 1024 + 1)
    #expect(h.call(ada, ["op": "send", "group": gid, "text": .string(text)]).code == "too_large")
}

@Test func subscribeReturnsTheLatestPageAndTheOnlineList() throws {
    let (h, ada, bob, gid) = try pair()
    _ = fill(h, ada, gid, 5)
    let reply = h.call(bob, ["op": "subscribe", "group": gid, "limit": 3])
    #expect(reply["messages"]?.arrayValue?.map { $0["text"] } == ["m2", "m3", "m4"])
    #expect(reply["more"] == true)
    #expect(reply["group"]?["online"]?.arrayValue?.count == 2)
}

@Test func subscribeSinceReturnsWhatCameAfterAndSaysWhetherMoreDid() throws {
    let (h, ada, bob, gid) = try pair()
    let ids = fill(h, ada, gid, 5)
    let page = h.call(bob, ["op": "subscribe", "group": gid, "since": ids[1], "limit": 2])
    #expect(page["messages"]?.arrayValue?.map { $0["text"] } == ["m2", "m3"])
    #expect(page["more"] == true)
    let all = h.call(bob, ["op": "subscribe", "group": gid, "since": ids[1]])
    #expect(all["messages"]?.arrayValue?.count == 3)
    #expect(all["more"] == false)
    let newest = h.call(bob, ["op": "subscribe", "group": gid, "since": ids[4]])
    #expect(newest["messages"] == [])
    #expect(newest["more"] == false)
}

@Test func historyPagesBackwardsAndForwards() throws {
    let (h, ada, _, gid) = try pair()
    let ids = fill(h, ada, gid, 5)
    let last = h.call(ada, ["op": "history", "group": gid, "limit": 2])
    #expect(last["messages"]?.arrayValue?.map { $0["text"] } == ["m3", "m4"])
    #expect(last["more"] == true)
    let before = h.call(ada, ["op": "history", "group": gid, "before": ids[3], "limit": 2])
    #expect(before["messages"]?.arrayValue?.map { $0["text"] } == ["m1", "m2"])
    #expect(before["more"] == true)
    let first = h.call(ada, ["op": "history", "group": gid, "before": ids[2], "limit": 2])
    #expect(first["messages"]?.arrayValue?.map { $0["text"] } == ["m0", "m1"])
    #expect(first["more"] == false)
    let after = h.call(ada, ["op": "history", "group": gid, "after": ids[2], "limit": 2])
    #expect(after["messages"]?.arrayValue?.map { $0["text"] } == ["m3", "m4"])
    #expect(after["more"] == false)
    #expect(h.call(ada, ["op": "history", "group": gid, "after": ids[4]])["messages"] == [])
    #expect(h.call(ada, ["op": "history", "group": gid, "before": ids[0], "after": ids[1]]).code == "bad_request")
    #expect(h.call(ada, ["op": "history", "group": gid, "limit": 0]).code == "bad_request")
}

@Test func receiptIsRecordedAndAnnounced() throws {
    let (h, ada, bob, gid) = try pair()
    let mid = fill(h, ada, gid, 1)[0]
    _ = h.events(bob)
    #expect(h.call(bob, ["op": "receipt", "group": gid, "message": mid]).isOK)
    let event = h.events(ada).first
    #expect(event?["op"] == "receipt")
    #expect(event?["message"] == mid)
    #expect(event?["at"] == .integer(h.now.milliseconds))
    let history = h.call(ada, ["op": "history", "group": gid])
    #expect(history["messages"]?[0]?["receivedBy"]?.objectValue?.count == 1)
    #expect(h.call(bob, ["op": "receipt", "group": gid, "message": "missing"]).code == "not_found")
}

@Test func typingGoesToOtherSubscribersOnly() throws {
    let (h, ada, bob, gid) = try pair()
    #expect(h.call(ada, ["op": "typing", "group": gid]).isOK)
    #expect(h.events(ada).isEmpty)
    #expect(h.events(bob).first?["op"] == "typing")
}

@Test func messagesAndReceiptsSurviveARestart() throws {
    let (h, ada, bob, gid) = try pair()
    let ids = fill(h, ada, gid, 3)
    h.call(bob, ["op": "receipt", "group": gid, "message": ids[0]])
    let before = h.service.state
    try h.restart()
    #expect(h.service.state == before)
    #expect(h.service.state.messages[gid.stringValue ?? ""]?.messages[0].receivedBy.count == 1)
}

@Test func badFramesGetErrorsAndThenAClose() throws {
    let h = try Harness()
    let client = h.connect("a")
    h.service.received(client, text: Array("not json".utf8))
    #expect(h.transport.take(client).first?.code == "bad_request")
    h.service.received(client, text: Array("[1,2]".utf8))
    #expect(h.transport.take(client).first?.code == "bad_request")
    for _ in 0..<8 { h.service.received(client, text: Array("{".utf8)) }
    #expect(h.transport.closes.map(\.code) == [1007])
}

@Test func aRequestsMembersAreFoundInAnyOrderAndARepeatedOneIsRefused() throws {
    let h = try Harness()
    let client = h.connect("a")
    h.service.received(client, text: Array(#"{"id":3,"extra":[1,{"op":"x"}],"op":"ping"}"#.utf8))
    let pong = try #require(h.transport.take(client).first)
    #expect(pong["op"] == "pong")
    #expect(pong["id"] == 3)
    h.service.received(client, text: Array(#"{"op":"ping","id":1,"op":"ping"}"#.utf8))
    let refused = try #require(h.transport.take(client).first)
    #expect(refused.code == "bad_request")
    #expect(refused["message"]?.stringValue?.contains("the key \"op\" appears twice") == true)
}

@Test func binaryFramesEndWithClose1003() throws {
    let h = try Harness()
    let client = h.connect("a")
    h.service.receivedBinary(client)
    #expect(h.transport.take(client).first?.code == "bad_request")
    for _ in 0..<9 { h.service.receivedBinary(client) }
    #expect(h.transport.closes.map(\.code) == [1003])
}

@Test func floodingIsRateLimitedAndThenClosed() throws {
    let h = try Harness { $0.messagesPerSecond = 5 }
    let client = h.connect("a")
    var codes: [String] = []
    for _ in 0..<12 {
        h.service.received(client, text: Array(#"{"op":"ping"}"#.utf8))
        codes += h.transport.take(client).map { $0.code ?? "ok" }
    }
    #expect(codes.filter { $0 == "ok" }.count == 10)
    #expect(codes.filter { $0 == "rate_limited" }.count == 2)
    for _ in 0..<4 { h.service.received(client, text: Array(#"{"op":"ping"}"#.utf8)) }
    #expect(h.transport.closes.map(\.code) == [1008])
}

@Test func aResentClientIdAnswersWithTheStoredMessageAndWritesNothing() throws {
    let (h, ada, bob, gid) = try pair()
    let first = h.call(ada, ["op": "send", "group": gid, "text": "once", "clientId": "c-1"])
    #expect(h.events(bob).count == 1)
    let journal = h.store.journalBytes
    let second = h.call(ada, ["op": "send", "group": gid, "text": "once", "clientId": "c-1"])
    #expect(second.isOK)
    #expect(second["message"] == first["message"])
    #expect(h.events(bob).isEmpty)
    #expect(h.store.journalBytes == journal)
    #expect(h.service.state.messages[gid.stringValue ?? ""]?.count == 1)
}

@Test func aResendWhileTheFirstIsPendingWaitsForIt() throws {
    let (h, ada, bob, gid) = try pair()
    for id in ["a", "b"] {
        let request: JSONValue = ["op": "send", "id": .string(id), "group": gid, "text": "twice", "clientId": "c-2"]
        h.service.received(ada, text: request.serialized)
    }
    h.settle()
    let replies = h.transport.take(ada)
    #expect(replies.map { $0["id"] } == ["a", "b"])
    #expect(replies.allSatisfy { $0.isOK })
    #expect(replies[0]["message"] == replies[1]["message"])
    #expect(h.events(bob).count == 1)
    #expect(h.service.state.messages[gid.stringValue ?? ""]?.count == 1)
}

@Test func aResendAfterARestartFindsTheStoredMessage() throws {
    let h = try Harness()
    let ada = h.user("ada")
    let gid = JSONValue.string(h.group("Team", owner: ada.client))
    let first = h.call(ada.client, ["op": "send", "group": gid, "text": "kept", "clientId": "c-3"])
    try h.restart()
    let again = h.connect("ada", token: ada.token)
    let second = h.call(again, ["op": "send", "group": gid, "text": "kept", "clientId": "c-3"])
    #expect(second["message"] == first["message"])
    #expect(h.service.state.messages[gid.stringValue ?? ""]?.count == 1)
}

@Test func clientIdsBelongToTheirSender() throws {
    let (h, ada, bob, gid) = try pair()
    let fromAda = h.call(ada, ["op": "send", "group": gid, "text": "ada", "clientId": "same"])
    let fromBob = h.call(bob, ["op": "send", "group": gid, "text": "bob", "clientId": "same"])
    #expect(fromBob["message"]?["text"] == "bob")
    #expect(fromBob["message"]?["id"] != fromAda["message"]?["id"])
}

@Test func aClientIdReusedInAnotherGroupIsAConflict() throws {
    let (h, ada, _, gid) = try pair()
    let other = JSONValue.string(h.group("Other", owner: ada))
    h.call(ada, ["op": "send", "group": gid, "text": "here", "clientId": "c-4"])
    #expect(h.call(ada, ["op": "send", "group": other, "text": "there", "clientId": "c-4"]).code == "conflict")
}

/// A `send` as a client may spell it: read from its bytes, or parsed into members when a key
/// has an escape or a byte outside ASCII or there are more than 16 members. Each is stored
/// and answered the same; a repeated key is refused either way.
@Test func aSendIsStoredHoweverItsKeysAreSpelled() throws {
    let (h, ada, bob, gid) = try pair()
    let group = try #require(gid.stringValue)
    let extra = (0..<16).map { #","x\#($0)":\#($0)"# }.joined()
    let requests = [
        #"{"op":"send","id":"plain","group":"\#(group)","text":"one"}"#,
        #"{"op":"send","id":"escaped","group":"\#(group)","\u0074ext":"two"}"#,
        #"{"op":"send","id":"accent","group":"\#(group)","text":"three","caf\#u{E9}":1}"#,
        #"{"op":"send","id":"many","group":"\#(group)","text":"four"\#(extra)}"#,
    ]
    for request in requests { h.service.received(ada, text: Array(request.utf8)) }
    h.settle()
    let replies = h.transport.take(ada)
    #expect(replies.map { $0["id"] } == ["plain", "escaped", "accent", "many"])
    #expect(replies.map { $0["message"]?["text"] } == ["one", "two", "three", "four"])
    #expect(h.events(bob).map { $0["message"]?["text"] } == ["one", "two", "three", "four"])
    for repeated in [#"{"op":"ping","op":"ping"}"#, #"{"op":"ping","\u006fp":"ping"}"#] {
        let client = h.connect("c")
        h.service.received(client, text: Array(repeated.utf8))
        let refusal = h.transport.take(client).first
        #expect(refusal?["code"] == "bad_request", "\(repeated)")
        #expect(refusal?["message"]?.stringValue?.contains(#"the key "op" appears twice"#) == true, "\(repeated)")
    }
}
