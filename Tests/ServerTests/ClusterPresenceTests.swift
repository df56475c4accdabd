import Chat
import Redis
import Testing
@testable import Server

private func event(_ seq: Int, _ room: String, _ delta: Int, _ name: String, node: String = "node-a") -> [UInt8] {
    Array("\(seq)\n\(room)\n\(delta)\n\(name)\n\(node)".utf8)
}

/// The snapshot script's answer: `[seq, room, [node\nname, count, ...], ...]`.
private func snapshot(_ seq: Int, _ rooms: [(String, [(String, Int)])]) -> RESPValue {
    var parts: [RESPValue] = [.bulk(Array(String(seq).utf8))]
    for (room, fields) in rooms {
        parts.append(.bulk(Array(room.utf8)))
        parts.append(.array(fields.flatMap { [RESPValue.bulk(Array($0.0.utf8)), .bulk(Array(String($0.1).utf8))] }))
    }
    return .array(parts)
}

@Test func eventsWaitForTheSnapshotAndOnlyNewerOnesApply() {
    let presence = ClusterPresence(node: "node-self")
    #expect(presence.awaitsSnapshot)
    presence.received(event(4, "hall", 1, "ann"))
    presence.received(event(5, "hall", 1, "bob"))
    #expect(presence.view.snapshot.isEmpty, "nothing applies before the snapshot")
    // The snapshot includes event 4 (ann on node-a) but not 5.
    presence.snapshot(snapshot(4, [("hall", [("node-a\nann", 1)])]))
    #expect(!presence.awaitsSnapshot)
    #expect(presence.view.snapshot.map(\.users) == [["ann", "bob"]])
    #expect(presence.view.snapshot.map(\.online) == [2], "ann counted once, from the snapshot")
    presence.received(event(5, "hall", 1, "bob"))
    #expect(presence.view.snapshot.map(\.online) == [2], "an event seen before is not applied again")
    presence.received(event(6, "hall", -1, "bob"))
    #expect(presence.view.snapshot.map(\.users) == [["ann"]])
}

@Test func aResyncTurnsTheDifferenceIntoJoinsAndLeaves() {
    let presence = ClusterPresence(node: "node-self")
    presence.snapshot(snapshot(1, [("hall", [("node-a\nann", 1), ("node-b\nbob", 2)])]))
    _ = presence.view.flush()
    presence.resync()
    // Meanwhile node-b died and node-c's cat came; names of several nodes add up.
    presence.snapshot(snapshot(9, [("hall", [("node-a\nann", 1), ("node-c\ncat", 1), ("node-d\nann", 1)])]))
    #expect(presence.view.flush() == [PresenceChange(place: .room("hall"), online: 3, joined: ["cat"], left: ["bob"])])
    presence.received(event(9, "hall", 1, "dan"))
    #expect(presence.view.flush().isEmpty, "event 9 is in the snapshot")
}

@Test func aSecondSnapshotWhileLiveIsDropped() {
    let presence = ClusterPresence(node: "node-self")
    presence.snapshot(snapshot(3, [("hall", [("node-a\nann", 1)])]))
    presence.snapshot(snapshot(7, []))
    #expect(presence.view.snapshot.map(\.users) == [["ann"]])
}

@Test func chatGroupsGoToTheChatServiceWithoutThisNodesOwn() {
    let presence = ClusterPresence(node: "node-self")
    var changes: [String] = []
    var snapshots: [[String: [String: Int]]] = []
    presence.chatChanged = { changes.append("\($0) \($1) \($2)") }
    presence.chatSnapshot = { snapshots.append($0) }
    presence.snapshot(snapshot(2, [
        ("chat:g1", [("node-a\nu1", 1), ("node-b\nu1", 1), ("node-self\nu2", 1)]),
        ("hall", [("node-a\nann", 1)]),
    ]))
    #expect(snapshots == [["g1": ["u1": 2]]], "two other nodes have u1; this node's own u2 is not another's")
    #expect(presence.view.snapshot.map(\.name) == ["hall"], "chat groups are not rooms")
    presence.received(event(3, "chat:g1", 1, "u3", node: "node-b"))
    presence.received(event(4, "chat:g1", 1, "u4", node: "node-self"))
    presence.received(event(5, "chat:g1", -1, "u1", node: "node-a"))
    #expect(changes == ["g1 u3 true", "g1 u1 false"])
    #expect(presence.view.snapshot.map(\.name) == ["hall"])
}
