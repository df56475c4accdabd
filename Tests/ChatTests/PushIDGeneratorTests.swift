import Testing
@testable import Chat

@Test func pushIDsAreTwentyCharactersOfTheFirebaseAlphabet() {
    var generator = PushIDGenerator()
    let id = generator.next(milliseconds: 1_700_000_000_000)
    #expect(id.utf8.count == 20)
    let alphabet = Set("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz")
    #expect(id.allSatisfy { alphabet.contains($0) })
}

@Test func pushIDsEncodeTheirTimestamp() {
    var generator = PushIDGenerator()
    let id = generator.next(milliseconds: 1_700_000_123_456)
    #expect(PushIDGenerator.timestamp(of: id) == 1_700_000_123_456)
}

@Test func pushIDsSortByCreationWithinOneMillisecond() {
    var generator = PushIDGenerator()
    let ids = (0..<1000).map { _ in generator.next(milliseconds: 1_700_000_000_000) }
    #expect(ids == ids.sorted())
    #expect(Set(ids).count == ids.count)
}

@Test func pushIDsSortByCreationAcrossMillisecondsAndClockSteps() {
    var generator = PushIDGenerator()
    var ids: [String] = []
    for time: Int64 in [1_000, 1_001, 999, 5_000_000_000_000, 5_000_000_000_000, 1_002] {
        ids.append(generator.next(milliseconds: time))
    }
    #expect(ids == ids.sorted())
    #expect(Set(ids).count == ids.count)
}

@Test func countingUpWithinOneMillisecondCarriesIntoTheHighDigits() {
    var generator = PushIDGenerator(lastTime: 1_000, high: 5, low: (1 << 36) - 2)
    let ids = (0..<3).map { _ in generator.next(milliseconds: 1_000) }
    #expect(ids.map { String($0.suffix(12)) } == ["-----4zzzzzz", "-----5------", "-----5-----0"])
    #expect(ids == ids.sorted())
}

@Test func laterMillisecondsSortLaterAcrossGenerators() {
    var first = PushIDGenerator()
    var second = PushIDGenerator()
    let early = first.next(milliseconds: 1_700_000_000_000)
    let late = second.next(milliseconds: 1_700_000_000_001)
    #expect(early < late)
}

@Test func timestampOfANonPushIDIsNil() {
    #expect(PushIDGenerator.timestamp(of: "short") == nil)
    #expect(PushIDGenerator.timestamp(of: "!!!!!!!!!!!!!!!!!!!!") == nil)
}
