import Chat
import Testing
@testable import Server

@Test func aJoinAndALeaveInOneWindowCancelOut() {
    let presence = RoomPresence()
    presence.joined("lobby", "ann")
    presence.left("lobby", "ann")
    #expect(presence.flush().isEmpty)
    #expect(presence.snapshot.isEmpty)
}

@Test func changesAreFoldedPerRoomWithCountsAndNames() {
    let presence = RoomPresence()
    presence.joined("lobby", "ann")
    presence.joined("lobby", "bea")
    presence.joined("lobby", "ann")
    #expect(presence.flush() == [PresenceChange(place: .room("lobby"), online: 3, joined: ["ann", "bea"], left: [])])
    presence.left("lobby", "ann")
    #expect(presence.flush() == [PresenceChange(place: .room("lobby"), online: 2, joined: [], left: [])],
            "ann is still there on another connection: only the count changed")
    presence.left("lobby", "ann")
    #expect(presence.flush() == [PresenceChange(place: .room("lobby"), online: 1, joined: [], left: ["ann"])])
    #expect(presence.snapshot.map(\.name) == ["lobby"] && presence.snapshot[0].users == ["bea"])
}
