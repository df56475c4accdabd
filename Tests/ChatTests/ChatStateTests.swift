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

/// The document tree of `state`, in the shape the service journals it (docs/durability.md).
private func tree(of state: ChatState) -> JSONValue {
    var auth: [String: JSONValue] = [:]
    for (uid, record) in state.auth {
        var fields: [String: JSONValue] = ["email": .string(record.email), "passwordHash": .string(record.passwordHash)]
        if !record.revoked.isEmpty { fields["revoked"] = .object(record.revoked.mapValues { .integer($0) }) }
        auth[uid] = .object(fields)
    }
    return [
        "Auth": .object(auth),
        "Groups": .object(state.groups.mapValues { $0.treeValue(online: nil) }),
        "Users": .object(state.users.mapValues(\.treeValue)),
        "Messages": .object(state.messages.mapValues { log in .object(log.messages.reduce(into: [:]) { $0[$1.id] = $1.treeValue }) }),
    ]
}

@Test func stateSurvivesATreeRoundTrip() throws {
    let state = sample()
    #expect(ChatState(tree: tree(of: state)) == state)
}

@Test func treeHasTheDocumentedShapeWithoutOnline() throws {
    let tree = tree(of: sample())
    #expect(tree["Groups"]?["g1"]?["userList"]?["u2"] == true)
    #expect(tree["Groups"]?["g1"]?["online"] == nil)
    #expect(tree["Users"]?["u2"]?["groupList"]?["g2"] == true)
    #expect(tree["Messages"]?["g1"]?["m1"]?["message"] == "hi\n\u{1}")
    #expect(tree["Messages"]?["g1"]?["m1"]?["receivedBy"]?["u2"] == 7)
}

@Test func storedCountsBeyondTheTreeCountAsOlderOnDisk() {
    let state = ChatState(tree: tree(of: sample()), storedCounts: ["g1": 502])
    #expect(state.messages["g1"]?.olderOnDisk == 500)
    #expect(state.messageCount == 502)
}

@Test func indexesAreRebuiltFromTheTree() throws {
    let state = ChatState(tree: tree(of: sample()))
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
    let history = { (gid: String) in state.messages[gid].map { Array($0.messages) } ?? [] }
    #expect(state.subtree(["Auth"], online: { _ in [] }, history: history) == nil)
    #expect(state.subtree([], online: { _ in [] }, history: history)?["Auth"] == nil)
    #expect(state.subtree(["Groups", "g1", "name"], online: { _ in [] }, history: history) == "Team")
    #expect(state.subtree(["Groups", "g1", "online"], online: { _ in ["u1"] }, history: history) == ["u1": true])
    #expect(state.subtree(["Messages", "g1", "m2", "user"], online: { _ in [] }, history: history) == "u2")
    #expect(state.subtree(["Users", "nobody"], online: { _ in [] }, history: history) == nil)
}

/// The page `log` answers from memory; nil when it would read the disk.
private func memoryPage(_ log: MessageLog, after: String? = nil, before: String? = nil, limit: Int) -> ([String], Bool)? {
    guard case .ready(let messages, let more) = log.plan(PageRequest(after: after, before: before, limit: limit), group: "g") else {
        return nil
    }
    return (messages.map(\.id), more)
}

@Test func messageLogPagesAtTheEdges() {
    let log = MessageLog((0..<5).map { ChatMessage(id: "m\($0)", user: "u", text: "t", imageUrl: nil, createdAt: 0) })
    #expect(memoryPage(log, limit: 10)?.0.count == 5)
    #expect(memoryPage(log, limit: 10)?.1 == false)
    #expect(memoryPage(log, before: "m0", limit: 3)?.0 == [])
    #expect(memoryPage(log, before: "m0", limit: 3)?.1 == false)
    #expect(memoryPage(log, after: "m4", limit: 3)?.0 == [])
    #expect(memoryPage(log, after: "m4", limit: 3)?.1 == false)
    #expect(memoryPage(log, after: "m25", limit: 3)?.0 == ["m3", "m4"])
}

@Test func pagesReachingOlderMessagesReadTheDiskAndJoinMemory() {
    let log = MessageLog((5..<10).map { ChatMessage(id: "m\($0)", user: "u", text: "t", imageUrl: nil, createdAt: 0) }, olderOnDisk: 5)
    #expect(memoryPage(log, limit: 3)?.0 == ["m7", "m8", "m9"])
    #expect(memoryPage(log, limit: 3)?.1 == true, "older messages remain on disk")
    #expect(memoryPage(log, after: "m6", limit: 2)?.0 == ["m7", "m8"])
    let request = PageRequest(after: nil, before: "m7", limit: 4)
    guard case .read(let query, let boundary, _) = log.plan(request, group: "g") else {
        Issue.record("a page older than memory reads the disk")
        return
    }
    #expect(query == .older(group: "g", before: "m5", limit: 2))
    let disk = ["m3", "m4"].map { ChatMessage(id: $0, user: "u", text: "t", imageUrl: nil, createdAt: 0) }
    let (page, more) = log.combine(request, boundary: boundary, disk: disk, diskMore: true)
    #expect(page.map(\.id) == ["m3", "m4", "m5", "m6"])
    #expect(more)
    let since = PageRequest(after: "m1", before: nil, limit: 4)
    guard case .read(let newer, let newerBoundary, _) = log.plan(since, group: "g") else {
        Issue.record("messages after an id older than memory are read from disk")
        return
    }
    #expect(newer == .newer(group: "g", after: "m1", before: "m5", limit: 4))
    let joined = log.combine(since, boundary: newerBoundary, disk: disk, diskMore: false)
    #expect(joined.0.map(\.id) == ["m3", "m4", "m5", "m6"])
    #expect(joined.more)
}
