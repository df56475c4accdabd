import Testing
@testable import Server

@Test func streamIdsCompareByMillisecondsThenSequence() {
    #expect(ClusterJournal.compare("1700000000000-0", "1700000000000-0") == 0)
    #expect(ClusterJournal.compare("1700000000000-9", "1700000000000-10") < 0)
    #expect(ClusterJournal.compare("1700000000001-0", "1700000000000-99") > 0)
    #expect(ClusterJournal.compare("999-0", "1000-0") < 0)
    #expect(ClusterJournal.compare("0-0", "1-1") < 0)
}
