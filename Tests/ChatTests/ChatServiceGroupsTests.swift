import JSON
import Testing
@testable import Chat

@Test func createMakesTheCallerTheFirstMember() throws {
    let h = try Harness()
    let ada = h.user("ada")
    let group = h.call(ada.client, ["op": "create", "name": "Team"])["group"]
    #expect(group?["name"] == "Team")
    #expect(group?["members"] == [.string(ada.id)])
    #expect(group?["invite"]?.stringValue?.isEmpty == false)
}

@Test func inviteAndJoinAddAMemberAndTellSubscribers() throws {
    let h = try Harness()
    let ada = h.user("ada")
    let bob = h.user("bob")
    let gid = h.group("Team", owner: ada.client)
    h.call(ada.client, ["op": "subscribe", "group": .string(gid)])
    let invite = h.call(ada.client, ["op": "invite", "group": .string(gid)])
    #expect(invite["url"]?.stringValue == "/join/" + (invite["invite"]?.stringValue ?? "?"))
    let joined = h.call(bob.client, ["op": "join", "invite": invite["invite"] ?? .null])
    #expect(joined["group"]?["members"]?.arrayValue?.count == 2)
    let events = h.events(ada.client).filter { $0["op"] == "member" }
    #expect(events == [["op": "member", "group": .string(gid), "user": .string(bob.id), "action": "joined"]])
}

@Test func joinWithAnUnknownInviteIsNotFound() throws {
    let h = try Harness()
    let ada = h.user("ada")
    #expect(h.call(ada.client, ["op": "join", "invite": "nope"]).code == "not_found")
}

@Test func nonMembersAreForbiddenAndUnknownGroupsNotFound() throws {
    let h = try Harness()
    let ada = h.user("ada")
    let eve = h.user("eve")
    let gid = JSONValue.string(h.group("Team", owner: ada.client))
    for op: JSONValue in ["invite", "leave", "subscribe", "unsubscribe", "history", "typing"] {
        #expect(h.call(eve.client, ["op": op, "group": gid]).code == "forbidden")
        #expect(h.call(eve.client, ["op": op, "group": "missing"]).code == "not_found")
    }
    #expect(h.call(eve.client, ["op": "send", "group": gid, "text": "hi"]).code == "forbidden")
    #expect(h.call(eve.client, ["op": "receipt", "group": gid, "message": "m"]).code == "forbidden")
}

@Test func leaveRemovesTheMemberAndTellsTheOthers() throws {
    let h = try Harness()
    let ada = h.user("ada")
    let bob = h.user("bob")
    let gid = JSONValue.string(h.group("Team", owner: ada.client, members: [bob.client]))
    h.call(ada.client, ["op": "subscribe", "group": gid])
    #expect(h.call(bob.client, ["op": "leave", "group": gid]).isOK)
    #expect(h.call(bob.client, ["op": "history", "group": gid]).code == "forbidden")
    #expect(h.events(ada.client).contains { $0["op"] == "member" && $0["action"] == "left" })
    #expect(h.call(bob.client, ["op": "groups"])["groups"] == [])
}

@Test func directIsOneGroupForBothDirections() throws {
    let h = try Harness()
    let ada = h.user("ada")
    let bob = h.user("bob")
    let first = h.call(ada.client, ["op": "direct", "user": .string(bob.id)])["group"]?["id"]
    let second = h.call(bob.client, ["op": "direct", "user": .string(ada.id)])["group"]?["id"]
    #expect(first != nil)
    #expect(first == second)
    #expect(h.call(ada.client, ["op": "invite", "group": first ?? .null]).code == "forbidden")
}

@Test func directWithYourselfOrNobodyIsRefused() throws {
    let h = try Harness()
    let ada = h.user("ada")
    #expect(h.call(ada.client, ["op": "direct", "user": .string(ada.id)]).code == "bad_request")
    #expect(h.call(ada.client, ["op": "direct", "user": "nobody"]).code == "not_found")
}

@Test func directSurvivesARestart() throws {
    let h = try Harness()
    let ada = h.user("ada")
    let bob = h.user("bob")
    let first = h.call(ada.client, ["op": "direct", "user": .string(bob.id)])["group"]?["id"]
    try h.restart()
    let again = h.call(h.connect("x", token: bob.token), ["op": "direct", "user": .string(ada.id)])["group"]?["id"]
    #expect(first == again)
}

@Test func groupsAreSortedByLatestActivityWithTheLastMessage() throws {
    let h = try Harness()
    let ada = h.user("ada")
    let old = h.group("Old", owner: ada.client)
    h.advance(10)
    let quiet = h.group("Quiet", owner: ada.client)
    h.advance(10)
    h.call(ada.client, ["op": "send", "group": .string(old), "text": "latest"])
    let groups = h.call(ada.client, ["op": "groups"])["groups"]?.arrayValue ?? []
    #expect(groups.map { $0["id"] } == [.string(old), .string(quiet)])
    #expect(groups.first?["lastMessage"]?["text"] == "latest")
    #expect(groups.last?["lastMessage"] == .null)
    #expect(groups.first?["members"] == 1)
}

@Test func groupsTouchedInOneMillisecondListInTheOrderTheyWereTouched() throws {
    let h = try Harness()
    let ada = h.user("ada")
    let first = h.group("first", owner: ada.client)
    let second = h.group("second", owner: ada.client)
    let ids = { h.call(ada.client, ["op": "groups"])["groups"]?.arrayValue?.compactMap { $0["id"]?.stringValue } }
    #expect(ids() == [second, first])
    #expect(h.call(ada.client, ["op": "send", "group": .string(first), "text": "hi"]).isOK)
    #expect(ids() == [first, second])
}

@Test func groupsOneUserCreatesAreLimitedPerHour() throws {
    let h = try Harness { $0.groupsPerHour = 2 }
    let ada = h.user("ada")
    let bob = h.user("bob")
    #expect(h.call(ada.client, ["op": "create", "name": "one"]).isOK)
    #expect(h.call(ada.client, ["op": "create", "name": "two"]).isOK)
    let refused = h.call(ada.client, ["op": "create", "name": "three"])
    #expect(refused.code == "rate_limited")
    #expect(refused["message"]?.stringValue?.contains("try again in") == true)
    // Per user, on any connection: another connection of Ada's is refused too, Bob is not.
    #expect(h.call(h.connect("ada-2", token: ada.token), ["op": "create", "name": "three"]).code == "rate_limited")
    #expect(h.call(bob.client, ["op": "create", "name": "bob's"]).isOK)
    h.advance(1_800_000)
    #expect(h.call(ada.client, ["op": "create", "name": "three"]).isOK)
}
