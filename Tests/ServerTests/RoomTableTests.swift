import Synchronization
import Testing
@testable import Server

@Test func aRoomHasTheBitsOfTheLoopsWithMembersUntilTheLastLeaves() {
    let table = RoomTable()
    let entry = table.enter("lobby", loop: 0)
    #expect(table.enter("lobby", loop: 3) === entry, "one entry per room, whichever loop comes")
    #expect(entry.loops.load(ordering: .acquiring) == 0b1001)
    #expect(table.loops(of: "lobby") == 0b1001)
    table.leave("lobby", loop: 0)
    #expect(table.loops(of: "lobby") == 0b1000)
    table.leave("lobby", loop: 3)
    #expect(table.loops(of: "lobby") == 0)
    #expect(table.enter("lobby", loop: 1) !== entry, "an emptied room is forgotten")
}

@Test func roomsDoNotShareBits() {
    let table = RoomTable()
    _ = table.enter("one", loop: 1)
    _ = table.enter("two", loop: 2)
    #expect(table.loops(of: "one") == 0b010)
    #expect(table.loops(of: "two") == 0b100)
    #expect(table.loops(of: "three") == 0)
}
