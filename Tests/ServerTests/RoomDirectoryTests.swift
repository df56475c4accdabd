import Chat
import Testing
@testable import Server

@Test func joinsAndLeavesOnSeveralLoopsAreCountedOnce() {
    let directory = RoomDirectory(loops: 3)
    #expect(directory.joined("lobby", "ann", on: 0) == .init(online: 1, loopsWithMembers: [0]))
    #expect(directory.joined("lobby", "bea", on: 2) == .init(online: 2, loopsWithMembers: [0, 2]))
    #expect(directory.joined("lobby", "cid", on: 2) == .init(online: 3, loopsWithMembers: [0, 2]))
    #expect(directory.left("lobby", "ann", on: 0) == .init(online: 2, loopsWithMembers: [2]))
    #expect(directory.count(of: "lobby") == 2)
    #expect(directory.roomCount == 1)
    _ = directory.left("lobby", "bea", on: 2)
    #expect(directory.left("lobby", "cid", on: 2) == .init(online: 0, loopsWithMembers: []))
    #expect(directory.roomCount == 0)
}

@Test func aLeaveFromALoopWithoutMembersChangesNothing() {
    let directory = RoomDirectory(loops: 2)
    _ = directory.joined("lobby", "ann", on: 0)
    #expect(directory.left("lobby", "ann", on: 1) == .init(online: 1, loopsWithMembers: []))
    #expect(directory.count(of: "lobby") == 1)
}

@Test func theDirectoryFeedsRoomPresence() {
    let directory = RoomDirectory(loops: 2)
    _ = directory.joined("lobby", "ann", on: 0)
    _ = directory.joined("lobby", "bea", on: 1)
    #expect(directory.presence.flush() == [PresenceChange(place: .room("lobby"), online: 2, joined: ["ann", "bea"], left: [])])
}
