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
        ChatMessage(id: "-Nabcdefghijklmnopqr", user: "-Nu", text: "plain text, the common send", imageUrl: nil, createdAt: 1_795_788_195_509),
        // Every field at once, the longest number: the most text around the values.
        ChatMessage(id: "m", user: "u", text: "t", imageUrl: "https://i.example/y.png", createdAt: .min, clientId: "c",
                    receivedBy: ["v": .min]),
        ChatMessage(id: "m", user: "u", text: "t", imageUrl: "https://i.example/y.png", createdAt: .min, clientId: "c"),
    ]
    for message in messages {
        let mutation = Mutation.set(path: ["Messages", "g\u{E9}", message.id], value: message.treeValue)
        // From a send's acknowledgement and from the message's JSON (a published message),
        // after what the journal already holds.
        let ack = ChatService<FakeTransport>.acknowledgement(.string("r\"1"), message, group: "g\u{E9}")
        var fromAck: [UInt8] = Array("earlier\n".utf8)
        ack.written.appendJournalLine(from: ack.bytes, to: &fromAck)
        #expect(fromAck == Array("earlier\n".utf8) + mutation.journalLine)
        let json = ChatService<FakeTransport>.writtenJSON(message, group: "g\u{E9}")
        var fromJSON: [UInt8] = []
        json.written.appendJournalLine(from: json.bytes, to: &fromJSON)
        #expect(fromJSON == mutation.journalLine)
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
    #expect(intoMemory.map(\.id) == ["id5", "id6"])
    #expect(log.olderOnDisk == 0)
    #expect(log.messages.map(\.id) == ["id7", "id8", "id9"])
}

/// A log of `count` messages "m00000", "m00001", ...: ids in String order, over several chunks.
private func numberedLog(_ count: Int) -> MessageLog {
    MessageLog((0..<count).map { message(numberedID($0)) })
}

private func numberedID(_ n: Int) -> String {
    let digits = String(n)
    return "m" + String(repeating: "0", count: max(0, 5 - digits.count)) + digits
}

@Test func aCheckpointReturnsExactlyTheMessagesItDroppedAndKeepsTheRest() {
    let total = 3 * MessageChunks.defaultChunkCapacity + 100
    var log = numberedLog(total)
    let lastStored = numberedID(2 * MessageChunks.defaultChunkCapacity + 10)
    let dropped = log.checkpointed(through: 1, lastStored: lastStored, keeping: 5)
    let gone = 2 * MessageChunks.defaultChunkCapacity + 11
    #expect(dropped.count == gone)
    #expect(dropped.map(\.id) == (0..<gone).map(numberedID))
    #expect(log.messages.map(\.id) == (gone..<total).map(numberedID))
    #expect(log.olderOnDisk == gone)
    #expect(log.total == total)
    #expect(log.index(of: numberedID(total - 1)) == total - gone - 1)
    #expect(log.index(of: numberedID(gone - 1)) == nil)
    log.insert(message(numberedID(total)))
    #expect(log.last?.id == numberedID(total))
}

@Test func aCheckpointKeepsTheNewestAndEverythingFromThePinnedMessageOn() {
    var log = numberedLog(20)
    #expect(log.checkpointed(through: 1, lastStored: nil, keeping: 3).isEmpty)
    #expect(log.checkpointed(through: 1, lastStored: numberedID(19), keeping: 30).isEmpty)
    // A receipt on message 8 journaled with ticket 5: it stays until a checkpoint holds 5.
    log.setReceipt(at: 8, user: "ada", time: 1, ticket: 5)
    let first = log.checkpointed(through: 4, lastStored: numberedID(19), keeping: 3)
    #expect(first.map(\.id) == (0..<8).map(numberedID))
    #expect(log.messages.first?.id == numberedID(8))
    #expect(log.messages.first?.receivedBy == ["ada": 1])
    let second = log.checkpointed(through: 5, lastStored: numberedID(19), keeping: 3)
    #expect(second.map(\.id) == (8..<17).map(numberedID))
    #expect(log.messages.map(\.id) == (17..<20).map(numberedID))
    #expect(log.olderOnDisk == 17)
}

@Test func aMessageFromAClockThatWentBackIsInsertedInOrderAndPinned() {
    var log = numberedLog(2 * MessageChunks.defaultChunkCapacity)
    let early = numberedID(MessageChunks.defaultChunkCapacity) + "a"
    log.insert(message(early), ticket: 9)
    #expect(log.messages[MessageChunks.defaultChunkCapacity + 1].id == early)
    #expect(log.messages.count == 2 * MessageChunks.defaultChunkCapacity + 1)
    #expect(log.pinned[early] == 9)
    // The same id again replaces the message.
    log.insert(ChatMessage(id: early, user: "u", text: "again", imageUrl: nil, createdAt: 1), ticket: 10)
    #expect(log.messages[MessageChunks.defaultChunkCapacity + 1].text == "again")
    #expect(log.messages.count == 2 * MessageChunks.defaultChunkCapacity + 1)
    let dropped = log.checkpointed(through: 9, lastStored: log.last?.id, keeping: 0)
    #expect(dropped.count == MessageChunks.defaultChunkCapacity + 1)
    #expect(log.messages.first?.id == early)
}

@Test func logsWithTheSameMessagesAreEqualHoweverTheyWereDropped() {
    var trimmed = numberedLog(MessageChunks.defaultChunkCapacity + 20)
    _ = trimmed.checkpointed(through: 0, lastStored: numberedID(14), keeping: 0)
    let fresh = MessageLog((15..<(MessageChunks.defaultChunkCapacity + 20)).map { message(numberedID($0)) }, olderOnDisk: 15)
    #expect(trimmed == fresh)
    #expect(trimmed != numberedLog(MessageChunks.defaultChunkCapacity + 20))
}
