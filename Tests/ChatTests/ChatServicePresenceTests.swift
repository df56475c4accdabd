import JSON
import Testing
@testable import Chat

@Test func twoJoinsInOneWindowMakeOnePresenceEvent() throws {
    let h = try Harness()
    let ada = h.user("ada")
    let bob = h.user("bob")
    let gid = JSONValue.string(h.group("Team", owner: ada.client, members: [bob.client]))
    h.call(ada.client, ["op": "subscribe", "group": gid])
    h.call(bob.client, ["op": "subscribe", "group": gid])
    #expect(h.events(ada.client).isEmpty)
    h.service.flushPresence()
    let events = h.events(ada.client)
    #expect(events.count == 1)
    #expect(events.first?["online"] == 2)
    #expect(events.first?["joined"]?.arrayValue?.count == 2)
    #expect(events.first?["left"] == [])
    h.service.flushPresence()
    #expect(h.events(ada.client).isEmpty)
}

@Test func joinAndLeaveInOneWindowCancelOut() throws {
    let h = try Harness()
    let ada = h.user("ada")
    let bob = h.user("bob")
    let gid = JSONValue.string(h.group("Team", owner: ada.client, members: [bob.client]))
    h.call(ada.client, ["op": "subscribe", "group": gid])
    h.service.flushPresence()
    _ = h.events(ada.client)
    h.call(bob.client, ["op": "subscribe", "group": gid])
    h.call(bob.client, ["op": "unsubscribe", "group": gid])
    h.service.flushPresence()
    #expect(h.events(ada.client).isEmpty)
}

@Test func closingAConnectionTakesTheUserOffline() throws {
    let h = try Harness()
    let ada = h.user("ada")
    let bob = h.user("bob")
    let gid = JSONValue.string(h.group("Team", owner: ada.client, members: [bob.client]))
    h.call(ada.client, ["op": "subscribe", "group": gid])
    h.call(bob.client, ["op": "subscribe", "group": gid])
    h.service.flushPresence()
    _ = h.events(ada.client)
    h.service.closed(bob.client)
    h.service.flushPresence()
    let event = h.events(ada.client).first
    #expect(event?["online"] == 1)
    #expect(event?["left"] == [.string(bob.id)])
    #expect(h.service.onlineUsers(in: gid.stringValue ?? "") == [ada.id])
}

@Test func aUserWithTwoConnectionsStaysOnlineUntilBothGo() throws {
    let h = try Harness()
    let ada = h.user("ada")
    let gid = JSONValue.string(h.group("Team", owner: ada.client))
    let second = h.connect("ada2", token: ada.token)
    h.call(ada.client, ["op": "subscribe", "group": gid])
    h.call(second, ["op": "subscribe", "group": gid])
    h.service.closed(ada.client)
    #expect(h.service.onlineUsers(in: gid.stringValue ?? "") == [ada.id])
    h.service.closed(second)
    #expect(h.service.onlineUsers(in: gid.stringValue ?? "").isEmpty)
    #expect(!h.service.isOnline(ada.id))
}

@Test func presenceSnapshotCountsOnlineUsers() throws {
    let h = try Harness()
    let ada = h.user("ada")
    let gid = h.group("Team", owner: ada.client)
    h.call(ada.client, ["op": "subscribe", "group": .string(gid)])
    let snapshot = try JSONValue.parse(h.service.presenceSnapshot(rooms: []))
    #expect(snapshot["onlineUsers"] == 1)
    #expect(snapshot["groups"]?[0]?["id"] == .string(gid))
    #expect(snapshot["groups"]?[0]?["online"] == 1)
}
