import Testing
import JSON
@testable import Store

@Test func everyOwnAppendIsPassedOnWithItsLinesAndReplicasAreNot() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let (store, _) = try openStore(folder)
    var passed: [(UInt64, [UInt8])] = []
    store.onAppend = { passed.append(($0, Array($1))) }
    let user = Mutation.set(path: ["Users", "u1"], value: ["name": "Ada"])
    let message = messageMutation(group: "g1", id: "m1", text: "hi", at: 1)
    let first = store.append([user, message])
    let second = store.append(mutationCount: 1) { message.appendJournalLine(to: &$0) }
    let replica = Mutation.set(path: ["Users", "u2"], value: ["name": "Bob"])
    let third = store.append(replica: replica.journalLine, mutationCount: 1)
    #expect(passed.map(\.0) == [first, second])
    #expect(passed.first?.1 == user.journalLine + message.journalLine)
    #expect(passed.last?.1 == message.journalLine)
    #expect(third == second + 1)
    store.close()
    let (reopened, tree) = try openStore(folder)
    reopened.close()
    #expect(tree["Users"]?["u2"]?["name"] == "Bob")
    #expect(tree["Users"]?["u1"]?["name"] == "Ada")
}
