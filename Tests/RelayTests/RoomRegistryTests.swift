import Testing
import Relay

@Test func registryCountsAndDropsEmptyRooms() {
    let registry = RoomRegistry<Member>()
    let a = Member(), b = Member()
    #expect(registry.join("lobby", a) == 1)
    #expect(registry.join("lobby", b) == 2)
    #expect(registry.join("other", a) == 1)
    #expect(registry.roomCount == 2)
    #expect(registry.leave("lobby", a) == 1)
    #expect(registry.leave("other", a) == 0)
    #expect(registry.roomCount == 1)
    #expect(registry.members(of: "other").isEmpty)
    #expect(registry.members(of: "lobby").elementsEqual([b], by: ===))
}

@Test func membersSnapshotSurvivesLeavingDuringIteration() {
    let registry = RoomRegistry<Member>()
    let members = (0..<5).map { _ in Member() }
    for member in members { registry.join("r", member) }
    var visited = 0
    for member in registry.members(of: "r") {
        registry.leave("r", member)
        visited += 1
    }
    #expect(visited == 5)
    #expect(registry.members(of: "r").isEmpty)
}

@Test func roomNamesFollowTheProtocol() {
    #expect(RoomName.isValid("lobby"))
    #expect(RoomName.isValid("a.b_c-D9"))
    #expect(RoomName.isValid(String(repeating: "x", count: 64)))
    #expect(!RoomName.isValid(String(repeating: "x", count: 65)))
    #expect(!RoomName.isValid(""))
    #expect(!RoomName.isValid("a b"))
    #expect(!RoomName.isValid("a/b"))
    #expect(!RoomName.isValid("é"))
}

@Test func aRoomHasAMemberBesidesOneOnlyWhenSomeoneElseIsIn() {
    let registry = RoomRegistry<Member>()
    let a = Member(), b = Member()
    #expect(!registry.hasMember(in: "r", besides: a))
    registry.join("r", a)
    #expect(!registry.hasMember(in: "r", besides: a))
    #expect(registry.hasMember(in: "r", besides: b))
    registry.join("r", b)
    #expect(registry.hasMember(in: "r", besides: a))
    registry.leave("r", a)
    #expect(registry.hasMember(in: "r", besides: a))
    #expect(!registry.hasMember(in: "r", besides: b))
}
