import Testing
@testable import Chat

private func message(_ n: Int) -> ChatMessage {
    ChatMessage(id: "m\(n)", user: "u", text: "t \(n)", imageUrl: nil, createdAt: Int64(n))
}

private func ids(_ range: Range<Int>) -> [String] {
    range.map { "m\($0)" }
}

/// Ten messages in chunks of four: the first takes the remainder, 2 + 4 + 4.
private func tenInFours() -> MessageChunks {
    MessageChunks((0..<10).map(message), chunkCapacity: 4)
}

/// The address of `messages`' elements, to tell a moved array from a copy.
private func address(_ messages: ArraySlice<ChatMessage>) -> UnsafeRawPointer? {
    messages.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
}

@Test func chunksIndexAcrossChunkBoundariesLikeOneArray() {
    let chunks = tenInFours()
    #expect(chunks.chunks.map(\.count) == [2, 4, 4])
    #expect(chunks.count == 10)
    #expect(chunks.indices == 0..<10)
    for position in 0..<10 { #expect(chunks[position].id == "m\(position)") }
    #expect(chunks.map(\.id) == ids(0..<10))
    #expect(chunks.first?.id == "m0")
    #expect(chunks.last?.id == "m9")
    #expect(chunks.lastID == "m9")
    #expect(chunks.reversed().map(\.id) == Array(ids(0..<10).reversed()))
}

@Test func anEmptyChunksHasNoFirstOrLast() {
    let chunks = MessageChunks()
    #expect(chunks.isEmpty)
    #expect(chunks.count == 0)
    #expect(chunks.first == nil)
    #expect(chunks.last == nil)
    #expect(chunks.lastID == nil)
    #expect(chunks.chunks.isEmpty)
}

@Test func appendFillsTheLastChunkThenStartsANewOne() {
    var chunks = MessageChunks(chunkCapacity: 4)
    for n in 0..<13 { chunks.append(message(n)) }
    #expect(chunks.chunks.map(\.count) == [4, 4, 4, 1])
    #expect(chunks.map(\.id) == ids(0..<13))
    for position in 0..<13 { #expect(chunks[position].id == "m\(position)") }
    #expect(chunks.last?.id == "m12")
    #expect(chunks.lastID == "m12")
}

@Test func aNewChunkDoesNotReserveAFullChunk() {
    var chunks = MessageChunks(chunkCapacity: 1024)
    chunks.append(message(0))
    chunks.append(message(1))
    #expect(chunks.chunks.count == 1)
    #expect(chunks.chunks[0].capacity < 1024)
}

@Test func removingNoMessagesChangesNothing() {
    var chunks = tenInFours()
    let removed = chunks.removePrefix(0)
    #expect(removed.isEmpty)
    #expect(removed.count == 0)
    #expect(Array(removed).isEmpty)
    #expect(chunks == tenInFours())
    #expect(chunks.chunks.map(\.count) == [2, 4, 4])
}

@Test func removingPartOfTheFirstChunkCopiesOnlyItsRest() {
    var chunks = tenInFours()
    let untouched = chunks.chunks[1...].map { address($0[...]) }
    let removed = chunks.removePrefix(1)
    #expect(removed.map(\.id) == ["m0"])
    #expect(removed.count == 1)
    #expect(chunks.map(\.id) == ids(1..<10))
    #expect(chunks.chunks.map(\.count) == [1, 4, 4])
    #expect(chunks.chunks.map { address($0[...]) }[1...].elementsEqual(untouched))
    #expect(chunks[0].id == "m1")
    #expect(chunks[1].id == "m2")
}

@Test func removingIntoALaterChunkMovesTheWholeOnesBeforeIt() {
    var chunks = tenInFours()
    let first = address(chunks.chunks[0][...])
    let removed = chunks.removePrefix(3)
    #expect(removed.map(\.id) == ids(0..<3))
    #expect(removed.slices.map(\.count) == [2, 1])
    #expect(address(removed.slices[0]) == first)
    #expect(chunks.map(\.id) == ids(3..<10))
    #expect(chunks.chunks.map(\.count) == [3, 4])
    for position in 0..<7 { #expect(chunks[position].id == "m\(position + 3)") }
}

@Test func removingExactlyWholeChunksMovesThemAndCopiesNothing() {
    var chunks = tenInFours()
    let before = chunks.chunks.map { address($0[...]) }
    let removed = chunks.removePrefix(6)
    #expect(removed.map(\.id) == ids(0..<6))
    #expect(removed.slices.map(\.count) == [2, 4])
    #expect(removed.slices.map(address) == Array(before[..<2]))
    #expect(chunks.chunks.map { address($0[...]) } == [before[2]])
    #expect(chunks.map(\.id) == ids(6..<10))
    #expect(chunks.first?.id == "m6")
}

@Test func removingEverythingLeavesAnEmptyChunksThatStillAppends() {
    var chunks = tenInFours()
    let removed = chunks.removePrefix(10)
    #expect(removed.map(\.id) == ids(0..<10))
    #expect(removed.count == 10)
    #expect(chunks.isEmpty)
    #expect(chunks.chunks.isEmpty)
    #expect(chunks.last == nil)
    chunks.append(message(10))
    #expect(chunks.map(\.id) == ["m10"])
}

@Test func insertingBeforeTheLastMessageKeepsTheOrder() {
    var chunks = tenInFours()
    chunks.insert(message(99), at: 9)
    #expect(chunks.map(\.id) == ids(0..<9) + ["m99", "m9"])
    #expect(chunks.last?.id == "m9")
    #expect(chunks.count == 11)
}

@Test func insertingIntoAFullChunkSplitsItAndIndexingStillFindsEveryMessage() {
    var chunks = tenInFours()
    // Position 2 starts the second chunk, which is full.
    chunks.insert(message(99), at: 2)
    #expect(chunks.map(\.id) == ["m0", "m1", "m99"] + ids(2..<10))
    #expect(chunks.chunks.map(\.count) == [2, 2, 3, 4])
    let expected = ["m0", "m1", "m99"] + ids(2..<10)
    for position in expected.indices { #expect(chunks[position].id == expected[position]) }
    chunks.insert(message(98), at: 7)
    #expect(chunks.map(\.id) == ["m0", "m1", "m99", "m2", "m3", "m4", "m5", "m98"] + ids(6..<10))
    #expect(chunks.chunks.allSatisfy { (1...4).contains($0.count) })
    // Appends still fill the last chunk after the split.
    chunks.append(message(10))
    chunks.append(message(11))
    #expect(chunks.suffix(3).map(\.id) == ["m9", "m10", "m11"])
}

@Test func aMessageIsReplacedAndChangedInPlace() {
    var chunks = tenInFours()
    chunks[5] = message(55)
    chunks[6].receivedBy["ada"] = 7
    #expect(chunks[5].id == "m55")
    #expect(chunks[6].receivedBy == ["ada": 7])
    #expect(chunks.map(\.id) == ids(0..<5) + ["m55"] + ids(6..<10))
}

@Test func slicesSpanChunksAndKeepTheirPositions() {
    let chunks = tenInFours()
    #expect(chunks[1..<7].map(\.id) == ids(1..<7))
    #expect(chunks[7...].map(\.id) == ids(7..<10))
    #expect(chunks[..<3].map(\.id) == ids(0..<3))
    #expect(chunks[4..<4].isEmpty)
    #expect(chunks[3..<8].startIndex == 3)
    #expect(chunks[3..<8].first?.id == "m3")
    #expect(Array(chunks[2...].prefix(3)).map(\.id) == ids(2..<5))
    // As paging joins a page read from disk with memory.
    let disk = [ChatMessage(id: "d", user: "u", text: "t", imageUrl: nil, createdAt: 0)]
    #expect((disk + chunks[8...]).map(\.id) == ["d", "m8", "m9"])
}

@Test func chunksAreEqualWhenTheirMessagesAreWhateverTheChunking() {
    var appended = MessageChunks(chunkCapacity: 4)
    for n in 0..<10 { appended.append(message(n)) }
    #expect(appended.chunks.map(\.count) == [4, 4, 2])
    #expect(appended == tenInFours())
    var trimmed = MessageChunks((0..<12).map(message), chunkCapacity: 3)
    _ = trimmed.removePrefix(2)
    #expect(trimmed.chunks.map(\.count) == [1, 3, 3, 3])
    #expect(MessageChunks((2..<12).map(message)) == trimmed)
    #expect(MessageChunks((0..<9).map(message), chunkCapacity: 4) != tenInFours())
    var changed = tenInFours()
    changed[3].receivedBy["ada"] = 1
    #expect(changed != tenInFours())
    #expect(MessageChunks() == MessageChunks(chunkCapacity: 2))
}

/// SplitMix64: a fixed seed gives the same operations on every run.
private struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Test(arguments: [1, 3, 8])
func chunksBehaveLikeAnArrayOverRandomOperations(chunkCapacity: Int) {
    var random = SeededGenerator(state: 0x5EED_0000 + UInt64(chunkCapacity))
    var chunks = MessageChunks((0..<20).map(message), chunkCapacity: chunkCapacity)
    var model = (0..<20).map(message)
    var next = 20
    for step in 0..<4000 {
        let operation = Int.random(in: 0..<100, using: &random)
        if operation < 55 {
            chunks.append(message(next))
            model.append(message(next))
            next += 1
        } else if operation < 65 {
            let position = Int.random(in: 0...model.count, using: &random)
            chunks.insert(message(next), at: position)
            model.insert(message(next), at: position)
            next += 1
        } else if operation < 72, !model.isEmpty {
            let position = Int.random(in: 0..<model.count, using: &random)
            chunks[position] = message(next)
            model[position] = message(next)
            next += 1
        } else if operation < 80, !model.isEmpty {
            let position = Int.random(in: 0..<model.count, using: &random)
            chunks[position].receivedBy["u\(step)"] = Int64(step)
            model[position].receivedBy["u\(step)"] = Int64(step)
        } else if operation < 95 {
            // Mostly a few, sometimes none or all.
            let k = Int.random(in: 0...min(model.count, Int.random(in: 0...12, using: &random)), using: &random)
            let removed = chunks.removePrefix(operation == 94 ? model.count : k)
            let expected = model[..<removed.count]
            #expect(Array(removed) == Array(expected), "step \(step)")
            #expect(removed.count == (operation == 94 ? model.count : k))
            model.removeFirst(removed.count)
        } else if !model.isEmpty {
            let lower = Int.random(in: 0..<model.count, using: &random)
            let upper = Int.random(in: lower...model.count, using: &random)
            #expect(Array(chunks[lower..<upper]) == Array(model[lower..<upper]), "step \(step)")
            #expect(Array(chunks[lower...]) == Array(model[lower...]), "step \(step)")
        }
        #expect(chunks.count == model.count, "step \(step)")
        #expect(chunks.first == model.first && chunks.last == model.last, "step \(step)")
        #expect(chunks.chunks.allSatisfy { (1...chunkCapacity).contains($0.count) }, "step \(step)")
        if !model.isEmpty {
            let position = Int.random(in: 0..<model.count, using: &random)
            #expect(chunks[position] == model[position], "step \(step)")
        }
        if step % 100 == 0 {
            #expect(Array(chunks) == model, "step \(step)")
            #expect(model.indices.allSatisfy { chunks[$0] == model[$0] }, "step \(step)")
        }
    }
    #expect(Array(chunks) == model)
    #expect(chunks == MessageChunks(model, chunkCapacity: chunkCapacity))
}

@Test func removingAMessageKeepsPositionsRight() {
    var chunks = MessageChunks((0..<10).map { message($0) }, chunkCapacity: 3)
    chunks.remove(at: 4)
    #expect(chunks.map(\.id) == ids(0..<4) + ids(5..<10))
    for _ in 0..<3 { chunks.remove(at: 0) }
    #expect(chunks.count == 6)
    #expect(chunks.first?.id == message(3).id)
    #expect(chunks[5].id == message(9).id)
    while !chunks.isEmpty { chunks.remove(at: chunks.count - 1) }
    #expect(chunks.isEmpty)
}
