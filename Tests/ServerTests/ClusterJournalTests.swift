import Testing
@testable import Server

@Test func streamIdsCompareByMillisecondsThenSequence() {
    #expect(ClusterJournal.compare("1700000000000-0", "1700000000000-0") == 0)
    #expect(ClusterJournal.compare("1700000000000-9", "1700000000000-10") < 0)
    #expect(ClusterJournal.compare("1700000000001-0", "1700000000000-99") > 0)
    #expect(ClusterJournal.compare("999-0", "1000-0") < 0)
    #expect(ClusterJournal.compare("0-0", "1-1") < 0)
    #expect(ClusterJournal.compare("not an id", "0-1") < 0)
    #expect(ClusterJournal.streamID("1700-5")! == (1700, 5))
    #expect(ClusterJournal.streamID("1700") == nil && ClusterJournal.streamID("-5") == nil)
}

@Test func theEntryBeforeAnIdWithASequenceAboveZeroIsTheOneNumberedOneLess() {
    #expect(PlacedEntries.previous(of: "1700000000000-5") == "1700000000000-4")
    #expect(PlacedEntries.previous(of: "1700000000000-1") == "1700000000000-0")
    #expect(PlacedEntries.previous(of: "1700000000000-0") == nil)
    #expect(PlacedEntries.previous(of: "1700000000000") == nil)
    #expect(PlacedEntries.previous(of: "1700000000000-x") == nil)
    #expect(PlacedEntries.previous(of: "x-3") == nil)
}

@Test func anEntryRightAfterThePositionIsAppliedAndItsTicketIsDurable() {
    var placed = PlacedEntries()
    var position = "100-0"
    placed.note("100-1", ticket: 7)
    let (moved, ticket) = placed.advance(&position)
    #expect(moved == 1 && ticket == 7 && position == "100-1" && placed.isEmpty)
}

@Test func entriesInARowAreAppliedTogetherWithTheLastTicket() {
    var placed = PlacedEntries()
    var position = "100-0"
    for sequence in 1...3 { placed.note("100-\(sequence)", ticket: UInt64(sequence * 10)) }
    let (moved, ticket) = placed.advance(&position)
    #expect(moved == 3 && ticket == 30 && position == "100-3" && placed.isEmpty)
}

@Test func anEntryWaitsForTheOneBeforeItWhichMayBeAnotherNodes() {
    var placed = PlacedEntries()
    var position = "100-0"
    placed.note("100-2", ticket: 5)
    placed.note("100-3", ticket: 6)
    var (moved, ticket) = placed.advance(&position)
    #expect(moved == 0 && ticket == nil && position == "100-0" && !placed.isEmpty)
    position = "100-1"
    (moved, ticket) = placed.advance(&position)
    #expect(moved == 2 && ticket == 6 && position == "100-3" && placed.isEmpty)
}

@Test func aNewMillisecondsEntryIsLeftToTheReaderAndSoAreTheOnesAfterIt() {
    var placed = PlacedEntries()
    var position = "99-5"
    placed.note("100-0", ticket: 1)
    placed.note("100-1", ticket: 2)
    var (moved, ticket) = placed.advance(&position)
    #expect(moved == 0 && ticket == nil && position == "99-5")
    position = "100-0"
    (moved, ticket) = placed.advance(&position)
    #expect(moved == 1 && ticket == 2 && position == "100-1")
}

@Test func entriesTheReaderAppliedFirstAreDroppedAndTheRestGoOn() {
    var placed = PlacedEntries()
    var position = "100-0"
    placed.note("100-1", ticket: 1)
    placed.note("100-2", ticket: 2)
    placed.note("100-3", ticket: 3)
    position = "100-2"
    let (moved, ticket) = placed.advance(&position)
    #expect(moved == 1 && ticket == 3 && position == "100-3" && placed.isEmpty)
}
