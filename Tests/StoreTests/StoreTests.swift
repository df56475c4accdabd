import Dispatch
import Foundation
import Testing
import JSON
@testable import Store

@Test func opensEmptyFolderWithEmptyTree() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let (store, tree) = try openStore(folder)
    #expect(tree == DocumentTree.empty)
    #expect(store.journalBytes == 0)
    var status = stat()
    #expect(stat(folder.data, &status) == 0)
    #expect(status.st_mode & 0o777 == 0o700)
    store.close()
}

@Test func appendedMutationsSurviveReopen() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let mutations = [
        Mutation.set(path: ["Users", "u1"], value: ["name": "Ada", "createdAt": 1_718_000_000_123]),
        messageMutation(group: "g1", id: "m1", text: "hello", at: 1_718_000_000_456),
    ]
    do {
        let (store, _) = try openStore(folder)
        store.append([mutations[0]])
        store.append([mutations[1]])
        store.close()
    }
    let (store, tree) = try openStore(folder)
    defer { store.close() }
    var expected = DocumentTree.empty
    DocumentTree.apply(mutations, to: &expected)
    #expect(tree == expected)
    #expect(tree["Users"]?["u1"]?["createdAt"]?.int64Value == 1_718_000_000_123)
}

@Test func replayEqualsApplyingInMemory() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    var expected = DocumentTree.empty
    do {
        let (store, _) = try openStore(folder, durability: .none)
        for i in 0..<300 {
            var batch = [messageMutation(group: "g\(i % 3)", id: "m\(i)", text: "text \(i)", at: Int64(i))]
            if i % 7 == 0 { batch.append(.delete(path: ["Messages", "g\(i % 3)", "m\(i / 2)"])) }
            if i % 11 == 0 { batch.append(.merge(path: ["Groups", "g\(i % 3)", "online"], value: ["u\(i)": true])) }
            DocumentTree.apply(batch, to: &expected)
            store.append(batch)
        }
        store.close()
    }
    let (store, tree) = try openStore(folder)
    defer { store.close() }
    #expect(tree == expected)
}

@Test func secondOpenOfSameFolderIsRefused() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let (first, _) = try openStore(folder)
    #expect(throws: StoreError.locked(directory: folder.data)) { try openStore(folder) }
    #expect(StoreError.locked(directory: "/x/data").description == "another switchboard is using data folder /x/data")
    first.close()
    let (again, _) = try openStore(folder)
    again.close()
}

@Test func secondProcessIsRefused() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let (store, _) = try openStore(folder)
    defer { store.close() }
    // flock(1) from util-linux tries the same lock from another process.
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
    process.arguments = ["--nonblock", "--exclusive", folder.file("lock"), "true"]
    try process.run()
    process.waitUntilExit()
    #expect(process.terminationStatus != 0)
}

@Test func appendsAfterCloseAreReportedFailed() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let (store, _) = try openStore(folder)
    let failures = Recorder<UInt64>()
    store.onFailure = { ticket, error in
        if error == .closed { failures.add(ticket) }
    }
    store.close()
    let ticket = store.append([.delete(path: ["Users", "u1"])])
    #expect(failures.values == [ticket])
}

@Test func errorsNameTheFile() {
    let corrupt = StoreError.corrupt(file: "data/journal.jsonl", line: 3, reason: "bad")
    #expect(corrupt.description == "data/journal.jsonl line 3 is corrupt: bad; fix or move the file away, nothing was changed")
    let io = StoreError.io(path: "data/journal.jsonl", operation: "fsync", errno: 5)
    #expect(io.description == "could not fsync data/journal.jsonl: Input/output error (errno 5)")
}

@Test func linesWrittenByTheCallerAreJournaledLikeMutations() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let mutation = messageMutation(group: "g1", id: "m1", text: "hello", at: 1_718_000_000_456)
    do {
        let (store, _) = try openStore(folder)
        let first = store.append(mutationCount: 1) { mutation.appendJournalLine(to: &$0) }
        let second = store.append([Mutation.delete(path: ["Users", "u9"])])
        #expect(second == first + 1)
        store.close()
    }
    #expect(folder.read("journal.jsonl") == mutation.journalLine + Mutation.delete(path: ["Users", "u9"]).journalLine)
    let (store, tree) = try openStore(folder)
    defer { store.close() }
    #expect(tree["Messages"]?["g1"]?["m1"]?["message"] == "hello")
}
