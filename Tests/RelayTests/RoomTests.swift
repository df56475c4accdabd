import Testing
import Relay

final class Member {}

@Test func joinAndLeaveKeepCount() {
    var room = Room<Member>()
    let a = Member(), b = Member(), c = Member()
    #expect(room.insert(a))
    #expect(room.insert(b))
    #expect(room.insert(c))
    #expect(!room.insert(b))
    #expect(room.count == 3)
    #expect(room.remove(a))
    #expect(!room.remove(a))
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
    for index in [1, 2, 4, 5, 6, 7, 8] { #expect(room.remove(members[index])) }
    #expect(room.isEmpty)
}
