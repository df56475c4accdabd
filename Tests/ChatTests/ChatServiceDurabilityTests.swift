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
    h.service.compact()
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
    #expect(h.service.state.messages[gid.stringValue ?? ""]?.count ?? 0 == 0)
}
