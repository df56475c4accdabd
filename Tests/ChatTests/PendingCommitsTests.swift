import Testing
@testable import Chat

private func message(_ id: String, clientId: String? = nil) -> ChatMessage {
    ChatMessage(id: id, user: "u1", text: "t", createdAt: 1, clientId: clientId)
}

@Test func completionsLeaveInTheOrderTheyWereRegisteredUpToTheTicket() {
    var pending = PendingCommits()
    var ran: [String] = []
    pending.add(1) { _ in ran.append("1") }
    pending.add(2) { _ in ran.append("2") }
    // A resend waits for the first send's ticket, registered after later ones.
    pending.add(1) { _ in ran.append("1 again") }
    pending.add(3) { _ in ran.append("3") }
    var ready: [PendingCompletion] = []
    pending.removeCompletions(through: 1, into: &ready)
    #expect(ready.map(\.ticket) == [1])
    ready.removeAll()
    pending.removeCompletions(through: 2, into: &ready)
    #expect(ready.map(\.ticket) == [2, 1], "the head moves past a lower ticket behind it")
    #expect(pending.hasCompletions)
    pending.removeCompletions(through: 3, into: &ready)
    #expect(ready.map(\.ticket) == [2, 1, 3])
    #expect(!pending.hasCompletions)
    for completion in ready { completion.run(true) }
    #expect(ran == ["2", "1 again", "3"])
}

@Test func messagesLeaveInTicketOrderWithTheirGroupsAndForgetTheirClientIds() {
    var pending = PendingCommits()
    pending.add(1, message: message("m1", clientId: "c1"), in: "g1") { _ in }
    pending.add(2, message: message("m2"), in: "g2") { _ in }
    pending.add(3, message: message("m3", clientId: "c3"), in: "g1") { _ in }
    #expect(pending.byClient.keys.map(\.clientId).sorted() == ["c1", "c3"])
    var removed: [String] = []
    pending.removeMessages(through: 2) { message, group, ticket in removed.append("\(ticket) \(group) \(message.id)") }
    #expect(removed == ["1 g1 m1", "2 g2 m2"])
    #expect(pending.byClient.keys.map(\.clientId) == ["c3"])
    #expect(pending.byClient[ClientMessageKey(user: "u1", clientId: "c3")]?.group == "g1")
    pending.removeMessages(through: 2) { message, _, _ in removed.append(message.id) }
    #expect(removed.count == 2, "nothing more through the same ticket")
    pending.removeMessages(through: 9) { message, group, ticket in removed.append("\(ticket) \(group) \(message.id)") }
    #expect(removed.last == "3 g1 m3")
    #expect(pending.byClient.isEmpty)
}

@Test func aLongBacklogIsCompactedAndKeepsItsOrder() {
    var pending = PendingCommits()
    for ticket in 1...3000 { pending.add(UInt64(ticket)) { _ in } }
    var ready: [PendingCompletion] = []
    for through in stride(from: 100, through: 3000, by: 100) {
        pending.removeCompletions(through: UInt64(through), into: &ready)
        // Added while some wait: the queue keeps going after a compaction.
        pending.add(UInt64(3000 + through)) { _ in }
    }
    #expect(ready.map(\.ticket) == (1...3000).map(UInt64.init))
    ready.removeAll()
    pending.removeCompletions(through: .max, into: &ready)
    #expect(ready.map(\.ticket) == stride(from: 3100, through: 6000, by: 100).map(UInt64.init))
}

@Test func aCompletionAddedWhileCompletionsRunRunsInTheSameFinishWhenItsTicketIsDurable() throws {
    let harness = try Harness()
    let service = harness.service
    var ran: [String] = []
    service.committed(5) { _ in
        ran.append("5")
        service.committed(3) { _ in ran.append("3, added by 5") }
        service.committed(6) { _ in ran.append("6, added by 5") }
    }
    service.durable(through: 5)
    #expect(ran == ["5", "3, added by 5"])
    #expect(service.hasPendingWrites, "6 is not durable yet")
    service.durable(through: 6)
    #expect(ran == ["5", "3, added by 5", "6, added by 5"])
    #expect(!service.hasPendingWrites)
}
