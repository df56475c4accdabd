import Relay
import Testing

final class Member {}

@Test func joinAndLeaveKeepCount() {
    var room = Room<Member>()
    let a = Member(), b = Member(), c = Member()
    let inserted = [room.insert(a), room.insert(b), room.insert(c), room.insert(b)]
    #expect(inserted == [true, true, true, false])
    #expect(room.count == 3)
    let removed = [room.remove(a), room.remove(a)]
    #expect(removed == [true, false])
    #expect(room.count == 2)
    #expect(room.contains(b) && room.contains(c) && !room.contains(a))
}

@Test func removingFromTheMiddleKeepsEveryOtherMember() {
    var room = Room<Member>()
    let members = (0..<10).map { _ in Member() }
    for member in members { room.insert(member) }
    room.remove(members[3])
    room.remove(members[0])
    room.remove(members[9])
    let left = Set(room.members.map(ObjectIdentifier.init))
    let expected = Set([1, 2, 4, 5, 6, 7, 8].map { ObjectIdentifier(members[$0]) })
    #expect(left == expected)
    var removedAll = true
    for index in [1, 2, 4, 5, 6, 7, 8] { removedAll = room.remove(members[index]) && removedAll }
    #expect(removedAll)
    #expect(room.isEmpty)
}
