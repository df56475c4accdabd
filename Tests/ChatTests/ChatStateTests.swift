import JSON
import Testing
@testable import Chat

private func sample() -> ChatState {
    var state = ChatState()
    state.users["u1"] = ChatUser(name: "Ada", avatar: "https://a.example/1.png", createdAt: 1, groups: ["g1"])
    state.users["u2"] = ChatUser(name: "Bob \"B\"", avatar: nil, createdAt: 2, groups: ["g1", "g2"])
    state.auth["u1"] = ChatAuth(email: "ada@example.com", passwordHash: "pbkdf2-sha256$1$AA$AA", revoked: ["s1": 9_999_999_999])
    state.groups["g1"] = ChatGroup(name: "Team", createdBy: "u1", createdAt: 3, invite: "code", members: ["u1", "u2"])
    state.groups["g2"] = ChatGroup(name: "Bob", createdBy: "u2", createdAt: 4, invite: nil, members: ["u2"], direct: "u2:u3")
    state.messages["g1"] = MessageLog([
        ChatMessage(id: "m2", user: "u2", text: nil, imageUrl: "https://i.example/x.png", createdAt: 6),
        ChatMessage(id: "m1", user: "u1", text: "hi\n\u{1}", imageUrl: nil, createdAt: 5, clientId: "c", receivedBy: ["u2": 7]),
    ])
    state.rebuildIndexes()
    return state
}

@Test func stateSurvivesATreeRoundTrip() throws {
    let state = sample()
    var bytes: [UInt8] = []
    state.writeTree(into: &bytes, now: 0)
    let tree = try JSONValue.parse(bytes)
    #expect(ChatState(tree: tree) == state)
}

@Test func treeHasTheDocumentedShapeWithoutOnline() throws {
    var bytes: [UInt8] = []
    sample().writeTree(into: &bytes, now: 0)
    let tree = try JSONValue.parse(bytes)
    #expect(tree["Groups"]?["g1"]?["userList"]?["u2"] == true)
    #expect(tree["Groups"]?["g1"]?["online"] == nil)
    #expect(tree["Users"]?["u2"]?["groupList"]?["g2"] == true)
    #expect(tree["Messages"]?["g1"]?["m1"]?["message"] == "hi\n\u{1}")
    #expect(tree["Messages"]?["g1"]?["m1"]?["receivedBy"]?["u2"] == 7)
    #expect(tree["Auth"]?["u1"]?["email"] == "ada@example.com")
}

@Test func expiredRevocationsAreDroppedFromTheTree() throws {
    var bytes: [UInt8] = []
    sample().writeTree(into: &bytes, now: 10_000_000_000)
    #expect(try JSONValue.parse(bytes)["Auth"]?["u1"]?["revoked"] == nil)
}

@Test func indexesAreRebuiltFromTheTree() throws {
    var bytes: [UInt8] = []
    sample().writeTree(into: &bytes, now: 0)
    let state = ChatState(tree: try JSONValue.parse(bytes))
    #expect(state.emails["ada@example.com"] == "u1")
    #expect(state.invites["code"] == "g1")
    #expect(state.directs["u2:u3"] == "g2")
}

@Test func malformedEntriesAreSkippedNotFatal() {
    let tree: JSONValue = ["Users": ["u1": 5, "u2": ["name": "ok"]], "Messages": ["g": ["m": "text"]], "Groups": []]
    let state = ChatState(tree: tree)
    #expect(state.users.keys.sorted() == ["u2"])
    #expect(state.messages["g"]?.count == 0)
}

@Test func subtreeNeverServesAuthAndDescends() {
    let state = sample()
    #expect(state.subtree(["Auth"], online: { _ in [] }) == nil)
    #expect(state.subtree([], online: { _ in [] })?["Auth"] == nil)
    #expect(state.subtree(["Groups", "g1", "name"], online: { _ in [] }) == "Team")
    #expect(state.subtree(["Groups", "g1", "online"], online: { _ in ["u1"] }) == ["u1": true])
    #expect(state.subtree(["Messages", "g1", "m2", "user"], online: { _ in [] }) == "u2")
    #expect(state.subtree(["Users", "nobody"], online: { _ in [] }) == nil)
}

@Test func messageLogPagesAtTheEdges() {
    let log = MessageLog((0..<5).map { ChatMessage(id: "m\($0)", user: "u", text: "t", imageUrl: nil, createdAt: 0) })
    let latest = log.page(after: nil, before: nil, limit: 10)
    #expect(latest.0.count == 5)
    #expect(!latest.more)
    let beforeFirst = log.page(after: nil, before: "m0", limit: 3)
    #expect(beforeFirst.0.isEmpty)
    #expect(!beforeFirst.more)
    let afterLast = log.page(after: "m4", before: nil, limit: 3)
    #expect(afterLast.0.isEmpty)
    #expect(!afterLast.more)
    let afterUnknown = log.page(after: "m25", before: nil, limit: 3)
    #expect(afterUnknown.0.map(\.id) == ["m3", "m4"])
}
