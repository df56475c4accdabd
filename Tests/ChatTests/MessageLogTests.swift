import JSON
import Store
import Testing
@testable import Chat

private func message(_ id: String) -> ChatMessage {
    ChatMessage(id: id, user: "u", text: "t \(id)", imageUrl: nil, createdAt: 1)
}

@Test func logSortsUnorderedPushIDsLikeStringOrder() {
    let ids = ["-Odv5u90CNl6zfLnN6aL", "-Odv5u9-jRg0wHVCnen0", "-Odv5u9-jRg0wHVCnen", "-Oduz", "-Odv5u9-", "a", "-Odv5u9-jRg0wHVCnen1"]
    let log = MessageLog(ids.map(message))
    #expect(log.messages.map(\.id) == ids.sorted())
    #expect(log.messages.map(\.text) == ids.sorted().map { "t \($0)" })
}

@Test func logWithNonASCIIIDsSortsByStringOrder() {
    // "e" + combining acute equals "é" for String, so bytes alone would not give String order.
    let ids = ["zeta", "\u{E9}b", "e\u{301}a", "ea", "f"]
    let log = MessageLog(ids.map(message))
    #expect(log.messages.map(\.id) == ids.sorted())
}

@Test func permutationIsAppliedAlongItsCycles() {
    var messages = ["a", "b", "c", "d", "e"].map(message)
    MessageLog.applyPermutation([3, 0, 4, 1, 2], to: &messages)
    #expect(messages.map(\.id) == ["d", "a", "e", "b", "c"])
}

@Test func journalLineOfAMessageEqualsTheMutationsLine() {
    let messages = [
        ChatMessage(id: "m1", user: "u1", text: "hi \"x\"\n", imageUrl: nil, createdAt: 5, clientId: "c1"),
        ChatMessage(id: "m2", user: "u2", text: nil, imageUrl: "https://i.example/x.png", createdAt: 6, receivedBy: ["u1": 7, "u3": 8]),
    ]
    for message in messages {
        var direct: [UInt8] = []
        message.appendJournalLine(group: "g\u{E9}", to: &direct)
        let mutation = Mutation.set(path: ["Messages", "g\u{E9}", message.id], value: message.treeValue)
        #expect(direct == mutation.journalLine)
    }
}

@Test func retentionDeletesFromDiskAndThenFromMemory() {
    let message = { (id: String) in ChatMessage(id: id, user: "u", text: "t", imageUrl: nil, createdAt: 0) }
    var log = MessageLog((5..<10).map { message("id\($0)") }, olderOnDisk: 5)
    let diskOnly = log.forget(through: "id3", records: 4)
    #expect(diskOnly.isEmpty)
    #expect(log.olderOnDisk == 1)
    #expect(log.count == 5)
    let intoMemory = log.forget(through: "id6", records: 3)
    #expect(intoMemory.count == 5)
    #expect(log.olderOnDisk == 0)
    #expect(log.messages.map(\.id) == ["id7", "id8", "id9"])
}
