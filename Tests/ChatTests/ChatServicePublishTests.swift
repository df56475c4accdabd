import JSON
import Testing
@testable import Chat

@Test func aPublishedMessageIsAnsweredOnceDurableAndDeliveredToEverySubscriber() throws {
    let h = try Harness()
    let ada = h.user("ada")
    let gid = h.group("Team", owner: ada.client)
    h.call(ada.client, ["op": "subscribe", "group": .string(gid)])
    var answer: Result<[UInt8], ChatError>?
    h.service.publish(group: gid, body: Array(#"{"text":"deployed","sender":"ci"}"#.utf8), arrival: 0) { answer = $0 }
    #expect(answer == nil || h.service.hasPendingWrites == false)
    h.settle()
    let message = try JSONValue.parse(try #require(answer).get())
    #expect(message["user"] == "system:ci" && message["text"] == "deployed")
    #expect(h.events(ada.client).contains(["op": "message", "group": .string(gid), "message": message]))
    #expect(h.call(ada.client, ["op": "history", "group": .string(gid)])["messages"]?[0]?["id"] == message["id"])
}

@Test func aPublishIsRefusedForAnUnknownGroupOrABadBody() throws {
    let h = try Harness()
    let ada = h.user("ada")
    let gid = h.group("Team", owner: ada.client)
    var codes: [ChatError.Code] = []
    let record: (Result<[UInt8], ChatError>) -> Void = { if case .failure(let error) = $0 { codes.append(error.code) } }
    h.service.publish(group: "nope", body: Array(#"{"text":"x"}"#.utf8), arrival: 0, completion: record)
    h.service.publish(group: gid, body: Array(#"{"text":"x","sender":"a:b"}"#.utf8), arrival: 0, completion: record)
    h.service.publish(group: gid, body: Array("[1]".utf8), arrival: 0, completion: record)
    h.service.publish(group: gid, body: Array(#"{"text":"x","imageUrl":"https://a/b.png"}"#.utf8), arrival: 0, completion: record)
    #expect(codes == [.notFound, .badRequest, .badRequest, .badRequest])
}

@Test func membersWithoutAConnectionAreReportedForOfflineDelivery() throws {
    let h = try Harness()
    let ada = h.user("ada")
    let bob = h.user("bob")
    let gid = h.group("Team", owner: ada.client, members: [bob.client])
    h.service.closed(bob.client)
    var deliveries: [OfflineDelivery] = []
    h.service.onOfflineDelivery = { deliveries.append($0) }
    let reply = h.call(ada.client, ["op": "send", "group": .string(gid), "text": "hi"])
    #expect(deliveries.map(\.users) == [[bob.id]])
    #expect(deliveries.first?.groupName == "Team")
    // The message as the sender's ack carries it.
    #expect(deliveries.first.flatMap { try? JSONValue.parse($0.message) } == reply["message"])
}

@Test func aRepublishWithTheSameClientIdIsAnsweredWithTheStoredMessage() throws {
    let h = try Harness()
    let ada = h.user("ada")
    let gid = h.group("Team", owner: ada.client)
    h.call(ada.client, ["op": "subscribe", "group": .string(gid)])
    let body = Array(#"{"text":"deployed","sender":"ci","clientId":"build-7"}"#.utf8)
    var answers: [[UInt8]] = []
    let record: (Result<[UInt8], ChatError>) -> Void = { if case .success(let message) = $0 { answers.append(message) } }
    h.service.publish(group: gid, body: body, arrival: 0, completion: record)
    // Again while the first is on its way to the disk, and once it is there.
    h.service.publish(group: gid, body: body, arrival: 0, completion: record)
    h.settle()
    h.service.publish(group: gid, body: body, arrival: 0, completion: record)
    #expect(answers.count == 3 && Set(answers).count == 1)
    #expect(h.events(ada.client).filter { $0["op"] == "message" }.count == 1)
    #expect(h.call(ada.client, ["op": "history", "group": .string(gid)])["messages"]?.arrayValue?.count == 1)
    var refused: ChatError.Code?
    h.service.publish(group: h.group("Other", owner: ada.client), body: body, arrival: 0) {
        if case .failure(let error) = $0 { refused = error.code }
    }
    #expect(refused == .conflict)
}
