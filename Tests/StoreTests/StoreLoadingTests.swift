import Foundation
import Testing
import JSON
import Logging
@testable import Store

private let lineA = String(decoding: Mutation.set(path: ["Users", "u1"], value: ["name": "Ada"]).journalLine, as: UTF8.self)
private let lineB = String(decoding: Mutation.set(path: ["Users", "u2"], value: ["name": "Bob"]).journalLine, as: UTF8.self)

private func treeWithUsers(_ names: [String: String]) -> JSONValue {
    var tree = DocumentTree.empty
    for (id, name) in names {
        DocumentTree.apply(.set(path: ["Users", id], value: ["name": .string(name)]), to: &tree)
    }
    return tree
}

/// Opens the folder with a journal ending in `tail` and checks the tail was cut with a warning.
private func expectTornTailCut(_ tail: String) throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    folder.write("journal.jsonl", lineA + lineB + tail)
    let (logger, messages) = recordingLogger()
    let opened = try Store.open(directory: folder.data, durability: .fsync, compactAfterBytes: 1 << 20, logger: logger)
    opened.store.close()
    #expect(opened.tree == treeWithUsers(["u1": "Ada", "u2": "Bob"]))
    #expect(folder.read("journal.jsonl") == Array((lineA + lineB).utf8))
    let warnings = messages.values.filter { $0.0 == .warning }.map(\.1)
    #expect(warnings.count == 1)
    #expect(warnings.first?.contains(folder.file("journal.jsonl")) == true)
    #expect(warnings.first?.contains("\(tail.utf8.count) bytes") == true)
}

@Test func cutsTornLineWithoutNewline() throws {
    try expectTornTailCut(#"{"op":"set","path":["Users","u3"],"val"#)
}

@Test func cutsCompleteLastLineMissingItsNewline() throws {
    try expectTornTailCut(#"{"op":"delete","path":["Users","u1"]}"#)
}

@Test func cutsUnparseableLastLine() throws {
    try expectTornTailCut(#"{"op":"set","path":["Us"# + "\n")
}

@Test func cutsZeroFilledTail() throws {
    try expectTornTailCut(String(repeating: "\u{0}", count: 40))
}

@Test func logsLoadSummary() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    folder.write("journal.jsonl", lineA + lineB)
    let (logger, messages) = recordingLogger()
    let opened = try Store.open(directory: folder.data, logger: logger)
    opened.store.close()
    #expect(messages.values.contains { $0.0 == .info && $0.1.hasPrefix("store loaded: 2 journal lines in ") && $0.1.hasSuffix(" ms") })
}

@Test func refusesCorruptLineInTheMiddleAndTouchesNothing() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let journal = Array((lineA + "{not json}\n" + lineB + #"{"op":"bad"#).utf8)
    let snapshot = treeWithUsers(["u0": "Zed"]).serialized
    folder.write("journal.jsonl", journal)
    folder.write("tree.json", snapshot)
    folder.write("tree.json.tmp", "partial")
    do {
        _ = try openStore(folder)
        Issue.record("open should fail")
    } catch let error as StoreError {
        guard case .corrupt(let file, let line, let reason) = error else {
            Issue.record("expected corrupt, got \(error)")
            return
        }
        #expect(file == folder.file("journal.jsonl"))
        #expect(line == 2)
        #expect(reason.contains("byte 1"))
    }
    #expect(folder.read("journal.jsonl") == journal)
    #expect(folder.read("tree.json") == snapshot)
    #expect(folder.read("tree.json.tmp") == Array("partial".utf8))
}

@Test func refusesValidJSONThatIsNotAMutation() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let journal = Array((lineA + #"{"op":"push","path":[]}"# + "\n").utf8)
    folder.write("journal.jsonl", journal)
    #expect(throws: StoreError.corrupt(file: folder.file("journal.jsonl"), line: 2, reason: "unknown op \"push\"")) {
        try openStore(folder)
    }
    #expect(folder.read("journal.jsonl") == journal)
}

/// Caught by the `store` fuzz target's invariants (docs/fuzzing.md) on this hand-made input:
/// the root became the number 1, which loaded, while the same tree as a snapshot is refused.
@Test func refusesJournalThatSetsTheRootToAScalar() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let journal = Array((lineA + #"{"op":"set","path":[],"value":1}"# + "\n").utf8)
    folder.write("journal.jsonl", journal)
    let reason = "a set of the root to something other than an object"
    #expect(throws: StoreError.corrupt(file: folder.file("journal.jsonl"), line: 2, reason: reason)) {
        try openStore(folder)
    }
    #expect(folder.read("journal.jsonl") == journal)
}

/// Caught by the `store` fuzz target's invariants (docs/fuzzing.md) on this hand-made input:
/// a path of 200 keys holding 100 nested arrays made a tree 300 levels deep, which loaded from
/// the journal, while the same tree as a snapshot passes the limit of 256 and is refused.
@Test func refusesJournalThatBuildsATreeTooDeepForASnapshot() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let keys = Array(repeating: #""k""#, count: 200).joined(separator: ",")
    let deep = #"{"op":"set","path":["# + keys + #"],"value":"# + String(repeating: "[", count: 100) + String(repeating: "]", count: 100) + "}\n"
    let journal = Array((lineA + deep).utf8)
    folder.write("journal.jsonl", journal)
    let reason = "a path of 200 keys; at most 127 are replayed"
    #expect(throws: StoreError.corrupt(file: folder.file("journal.jsonl"), line: 2, reason: reason)) {
        try openStore(folder)
    }
    #expect(folder.read("journal.jsonl") == journal)
}

@Test func refusesCorruptSnapshotAndTouchesNothing() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let snapshot = Array("{\"Groups\":{},\n\"Users\":{,}}".utf8)
    let journal = Array(lineA.utf8)
    folder.write("tree.json", snapshot)
    folder.write("journal.jsonl", journal)
    do {
        _ = try openStore(folder)
        Issue.record("open should fail")
    } catch let error as StoreError {
        guard case .corrupt(let file, let line, _) = error else {
            Issue.record("expected corrupt, got \(error)")
            return
        }
        #expect(file == folder.file("tree.json"))
        #expect(line == 2)
    }
    #expect(folder.read("tree.json") == snapshot)
    #expect(folder.read("journal.jsonl") == journal)
}

@Test func removesStaleTemporarySnapshot() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    folder.write("tree.json.tmp", "{\"half\":")
    let (store, tree) = try openStore(folder)
    store.close()
    #expect(tree == DocumentTree.empty)
    #expect(folder.read("tree.json.tmp") == nil)
}

@Test func replaysOldJournalOverNewSnapshotIdempotently() throws {
    // The state after a crash between the snapshot rename and the journal truncation:
    // tree.json already holds the journal's effects, and the journal is still whole.
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let mutations: [Mutation] = [
        .set(path: ["Groups", "g1"], value: ["name": "room", "userList": ["u1": true]]),
        messageMutation(group: "g1", id: "m1", text: "one", at: 1),
        .delete(path: ["Messages", "g1", "m1"]),
        messageMutation(group: "g1", id: "m2", text: "two", at: 2),
        .merge(path: ["Groups", "g1", "userList"], value: ["u1": nil, "u2": true]),
    ]
    var expected = DocumentTree.empty
    DocumentTree.apply(mutations, to: &expected)
    do {
        let (store, _) = try openStore(folder)
        store.append(mutations)
        store.close()
    }
    folder.write("tree.json", expected.serialized)
    let (store, tree) = try openStore(folder)
    store.close()
    #expect(tree == expected)
}
