import JSON
import Store
import Testing
@testable import Chat

/// Two services as two nodes of a cluster: what one appends to its store is what the cluster's
/// journal carries (`Store.onAppend`), and the other applies it (`applyReplica`).
private final class TwoNodes {
    let origin: Harness
    let replica: Harness
    /// Journal lines the origin appended, one entry per append.
    var entries: [[UInt8]] = []

    init() throws {
        origin = try Harness()
        replica = try Harness()
        origin.store.onAppend = { [unowned self] _, lines in entries.append(Array(lines)) }
    }

    /// Applies every entry the origin appended since the last call to the replica.
    func replicate() {
        for lines in entries { #expect(replica.service.applyReplica(lines)) }
        entries = []
        replica.settle()
    }
}

@Test func aReplicaBuildsTheSameRecordsAndIndexes() throws {
    let nodes = try TwoNodes()
    let ada = nodes.origin.user("ada")
    let bob = nodes.origin.user("bob")
    let gid = nodes.origin.group("Team", owner: ada.client, members: [bob.client])
    nodes.origin.call(ada.client, ["op": "direct", "user": .string(bob.id)])
    nodes.origin.call(bob.client, ["op": "profile", "name": "Robert"])
    nodes.replicate()
    let (a, b) = (nodes.origin.service.state, nodes.replica.service.state)
    #expect(b.users == a.users)
    #expect(b.auth == a.auth)
    #expect(b.groups == a.groups)
    #expect(b.emails == a.emails)
    #expect(b.invites == a.invites)
    #expect(b.directs == a.directs)
    #expect(b.groups[gid]?.members == [ada.id, bob.id])
}

@Test func aReplicaStoresMessagesAndSendsTheirEventsToItsSubscribers() throws {
    let nodes = try TwoNodes()
    let ada = nodes.origin.user("ada")
    let bob = nodes.origin.user("bob")
    let gid = nodes.origin.group("Team", owner: ada.client, members: [bob.client])
    nodes.replicate()
    // Bob signs in on the replica with the origin's token (the cluster shares its secret).
    let bobThere = nodes.replica.connect("bob-there", token: bob.token)
    #expect(nodes.replica.call(bobThere, ["op": "subscribe", "group": .string(gid)])["op"] == "ok")
    let sent = nodes.origin.call(ada.client, ["op": "send", "group": .string(gid), "text": "hello", "clientId": "c1"])
    let mid = sent["message"]?["id"]?.stringValue ?? ""
    nodes.replicate()
    let events = nodes.replica.events(bobThere)
    #expect(events.map { $0["op"] } == ["message"])
    #expect(events.first?["message"]?["text"] == "hello")
    #expect(nodes.replica.service.state.messages[gid]?.messages.map(\.id) == [mid])
    // The same clientId is known on the replica: a resend there gets the stored message.
    #expect(nodes.replica.service.state.message(sentBy: ada.id, clientId: "c1")?.message.id == mid)
    nodes.origin.call(bob.client, ["op": "receipt", "group": .string(gid), "message": .string(mid)])
    nodes.replicate()
    #expect(nodes.replica.events(bobThere).map { $0["op"] } == ["receipt"])
    #expect(nodes.replica.service.state.messages[gid]?.messages.first?.receivedBy[bob.id] != nil)
    nodes.origin.call(bob.client, ["op": "leave", "group": .string(gid)])
    nodes.replicate()
    #expect(nodes.replica.service.state.groups[gid]?.members == [ada.id])
    // Bob left on another node: his subscription here ends with the group.
    #expect(nodes.replica.events(bobThere).isEmpty)
}

@Test func aReplicaTellsItsSubscribersWhoJoinedAndLeft() throws {
    let nodes = try TwoNodes()
    let ada = nodes.origin.user("ada")
    let bob = nodes.origin.user("bob")
    let gid = nodes.origin.group("Team", owner: ada.client)
    nodes.replicate()
    let adaThere = nodes.replica.connect("ada-there", token: ada.token)
    nodes.replica.call(adaThere, ["op": "subscribe", "group": .string(gid)])
    let code = nodes.origin.call(ada.client, ["op": "invite", "group": .string(gid)])["invite"] ?? .null
    nodes.origin.call(bob.client, ["op": "join", "invite": code])
    nodes.replicate()
    let joined = nodes.replica.events(adaThere).filter { $0["op"] == "member" }
    #expect(joined.map { $0["action"] } == ["joined"])
    #expect(joined.first?["user"]?.stringValue == bob.id)
    nodes.origin.call(bob.client, ["op": "leave", "group": .string(gid)])
    nodes.replicate()
    #expect(nodes.replica.events(adaThere).filter { $0["op"] == "member" }.map { $0["action"] } == ["left"])
}

@Test func aReplicatedDeleteTakesAMessageBackAndReplayingItChangesNothing() throws {
    let nodes = try TwoNodes()
    let ada = nodes.origin.user("ada")
    let gid = nodes.origin.group("Team", owner: ada.client)
    nodes.origin.call(ada.client, ["op": "send", "group": .string(gid), "text": "one"])
    let entries = nodes.entries
    nodes.replicate()
    #expect(nodes.replica.service.state.messages[gid]?.count == 1)
    for lines in entries { #expect(nodes.replica.service.applyReplica(lines)) }
    #expect(nodes.replica.service.state.messages[gid]?.count == 1)
    let mid = nodes.replica.service.state.messages[gid]?.messages.first?.id ?? ""
    #expect(nodes.replica.service.applyReplica(Mutation.delete(path: ["Messages", gid, mid]).journalLine))
    #expect(nodes.replica.service.state.messages[gid]?.count == 0)
}

@Test func linesThatAreNotMutationsChangeNothing() throws {
    let h = try Harness()
    let before = h.store.statistics.mutations
    #expect(!h.service.applyReplica(Array(#"{"op":"set","path":["Users","x"],"value":{"name":"X"}}"#.utf8) + [10] + Array("not json\n".utf8)))
    h.settle()
    #expect(h.service.state.users["x"] == nil)
    #expect(h.store.statistics.mutations == before)
}

@Test func aChangeTheClusterCouldNotTakeLeavesTheLocalCopyToo() throws {
    let h = try Harness()
    let ada = h.user("ada")
    let gid = h.group("Team", owner: ada.client)
    h.service.isReplicated = true
    let request: JSONValue = ["op": "send", "id": "f", "group": .string(gid), "text": "lost"]
    h.service.received(ada.client, text: request.serialized)
    h.service.failed(through: UInt64.max)
    #expect(h.transport.take(ada.client).first?.code == "unavailable")
    h.store.compact()
    h.settle()
    try h.restart()
    #expect(h.service.state.messages[gid]?.count ?? 0 == 0)
}

@Test func withoutTheClusterChangesAreRefusedAndReadsStillAnswer() throws {
    let h = try Harness()
    let ada = h.user("ada")
    let gid = h.group("Team", owner: ada.client)
    h.call(ada.client, ["op": "send", "group": .string(gid), "text": "before"])
    h.service.acceptsChanges = false
    #expect(h.call(ada.client, ["op": "send", "group": .string(gid), "text": "during"]).code == "unavailable")
    #expect(h.call(ada.client, ["op": "create", "name": "Other"]).code == "unavailable")
    #expect(h.call(h.connect("new"), ["op": "signup", "email": "new@example.com", "password": "password-new", "name": "New"]).code
        == "unavailable")
    #expect(h.call(ada.client, ["op": "history", "group": .string(gid)])["messages"]?.arrayValue?.count == 1)
    #expect(h.call(h.connect("again"), ["op": "auth", "token": .string(ada.token)])["op"] == "ok")
}

@Test func withoutASecretNobodySignsIn() throws {
    let h = try Harness()
    let ada = h.user("ada")
    h.service.secret = []
    #expect(h.call(h.connect("again"), ["op": "auth", "token": .string(ada.token)]).code == "unavailable")
    #expect(h.service.validSession(ada.token) == nil)
}

@Test func typingOnAnotherNodeReachesThisNodesSubscribersOfMembersOnly() throws {
    let h = try Harness()
    let ada = h.user("ada")
    let bob = h.user("bob")
    let gid = h.group("Team", owner: ada.client, members: [bob.client])
    h.call(ada.client, ["op": "subscribe", "group": .string(gid)])
    var told: [String] = []
    h.service.onTyping = { told.append("\($0) \($1)") }
    h.call(bob.client, ["op": "typing", "group": .string(gid)])
    #expect(told == ["\(gid) \(bob.id)"])
    _ = h.events(ada.client)
    h.service.remoteTyping(gid, bob.id)
    #expect(h.events(ada.client).map { $0["op"] } == ["typing"])
    h.service.remoteTyping(gid, "stranger")
    #expect(h.events(ada.client).isEmpty)
}

@Test func aLogoutOnAnotherNodeSignsOutTheConnectionsThatUsedTheToken() throws {
    let nodes = try TwoNodes()
    let ada = nodes.origin.user("ada")
    nodes.replicate()
    let adaThere = nodes.replica.connect("ada-there", token: ada.token)
    #expect(nodes.replica.call(adaThere, ["op": "groups"])["op"] == "ok")
    nodes.origin.call(ada.client, ["op": "logout"])
    nodes.replicate()
    #expect(nodes.replica.call(adaThere, ["op": "groups"]).code == "unauthorized")
    #expect(nodes.replica.service.validSession(ada.token) == nil)
}

@Test func aSignupClaimsItsEmailAcrossTheClusterFirst() throws {
    let h = try Harness()
    var claims: [String: String] = ["taken@example.com": "someone"]
    var released: [String] = []
    var reachable = true
    h.service.claimEmail = { email, uid, done in
        guard reachable else { return done(.failure(.clusterUnavailable)) }
        guard claims[email] == nil else { return done(.success(false)) }
        claims[email] = uid
        done(.success(true))
    }
    h.service.releaseEmail = { email, _ in released.append(email) }
    func signup(_ email: String) -> JSONValue {
        h.call(h.connect(email), ["op": "signup", "email": .string(email), "password": "password-1", "name": "N"])
    }
    #expect(signup("taken@example.com").code == "conflict")
    #expect(h.service.state.emails["taken@example.com"] == nil)
    let ok = signup("new@example.com")
    #expect(ok["op"] == "ok")
    #expect(claims["new@example.com"] == ok["user"]?["id"]?.stringValue)
    reachable = false
    #expect(signup("later@example.com").code == "unavailable")
    #expect(h.service.state.emails["later@example.com"] == nil)
    reachable = true
    // A claim whose account could not be stored is given back.
    let client = h.connect("failing")
    h.service.received(client, text: (["op": "signup", "id": "s", "email": "fails@example.com", "password": "password-1",
                                       "name": "F"] as JSONValue).serialized)
    h.service.failed(through: UInt64.max)
    #expect(h.transport.take(client).first?.code == "unavailable")
    #expect(released == ["fails@example.com"])
}

@Test func aReplicaOfMessagesThisNodeKeepsOnDiskSendsNothingAndLeavesMemoryAsItIs() throws {
    let nodes = try TwoNodes()
    let ada = nodes.origin.user("ada")
    let gid = nodes.origin.group("Team", owner: ada.client)
    for number in 0..<10 {
        nodes.origin.advance(1)
        nodes.origin.call(ada.client, ["op": "send", "group": .string(gid), "text": .string("n\(number)")])
    }
    let entries = nodes.entries
    nodes.replicate()
    nodes.replica.checkpoint()
    let log = try #require(nodes.replica.service.state.messages[gid])
    #expect(log.olderOnDisk > 0)
    let adaThere = nodes.replica.connect("ada-there", token: ada.token)
    nodes.replica.call(adaThere, ["op": "subscribe", "group": .string(gid)])
    _ = nodes.replica.events(adaThere)
    // The whole journal again, as a snapshot loaded over this node's history brings it.
    for lines in entries { #expect(nodes.replica.service.applyReplica(lines)) }
    nodes.replica.settle()
    #expect(nodes.replica.events(adaThere).filter { $0["op"] == "message" }.isEmpty)
    #expect(nodes.replica.service.state.messages[gid]?.count == log.count)
    let texts = nodes.replica.call(adaThere, ["op": "history", "group": .string(gid), "limit": 50])["messages"]?.arrayValue?
        .compactMap { $0["text"]?.stringValue }
    #expect(texts == (0..<10).map { "n\($0)" })
}
