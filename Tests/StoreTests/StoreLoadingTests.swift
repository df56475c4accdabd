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

/// Opens a folder whose journal ends in `tail` and checks the tail was dropped (with a warning
/// when `warned`) and the whole lines were applied; `legacy` leaves out the manifest, so the
/// folder is migrated from the first layout.
private func expectTornTailCut(_ tail: String, legacy: Bool = false, warned: Bool = true) throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    if !legacy {
        let (store, _) = try openStore(folder)
        store.close()
    }
    folder.write("journal.jsonl", lineA + lineB + tail)
    let (logger, messages) = recordingLogger()
    let opened = try Store.open(directory: folder.data, durability: .fsync, compactAfterBytes: 1 << 20, logger: logger)
    opened.store.close()
    #expect(opened.tree == treeWithUsers(["u1": "Ada", "u2": "Bob"]))
    #expect(folder.read("journal.jsonl") == [], "the whole lines are in the checkpoint now")
    let warnings = messages.values.filter { $0.0 == .warning }.map(\.1)
    #expect(warnings.count == (warned ? 1 : 0))
    if warned {
        #expect(warnings.first?.contains("journal") == true)
        // A spare journal's zeros after the torn line are not counted as part of it.
        let torn = tail.utf8.count - tail.utf8.reversed().prefix { $0 == 0 }.count
        #expect(warnings.first?.contains("\(torn) bytes") == true)
    }
    let (store, tree) = try openStore(folder)
    store.close()
    #expect(tree == opened.tree)
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

@Test func aZeroTailIsASpareJournalsUnusedPartAndDroppedSilently() throws {
    try expectTornTailCut(String(repeating: "\u{0}", count: 40), warned: false)
}

@Test func aTornLineBeforeZerosIsCutWithoutThem() throws {
    let torn = #"{"op":"set","path":["Users","u3"],"val"#
    try expectTornTailCut(torn + String(repeating: "\u{0}", count: 40))
}

@Test(arguments: [1, 7, 8, 9, 15, 16, 17])
func zerosOfAnyLengthAfterWholeOrTornLinesAreTheSparesUnusedPart(zeros: Int) throws {
    // The zeros are passed over a word at a time, then byte by byte.
    try expectTornTailCut(String(repeating: "\u{0}", count: zeros), warned: false)
    try expectTornTailCut(#"{"op":"set","path":["Users","u3"],"val"# + String(repeating: "\u{0}", count: zeros))
}

@Test func cutsTornLineOfAFirstLayoutJournalWhileMigrating() throws {
    try expectTornTailCut(#"{"op":"set","path":["Users","u3"],"val"#, legacy: true)
}

@Test func logsLoadSummary() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let (created, _) = try openStore(folder)
    created.close()
    folder.write("journal.jsonl", lineA + lineB)
    let (logger, messages) = recordingLogger()
    let opened = try Store.open(directory: folder.data, logger: logger)
    opened.store.close()
    #expect(messages.values.contains { $0.0 == .info && $0.1.hasPrefix("store loaded: 2 journal lines in ") && $0.1.hasSuffix(" ms") })
}

@Test func refusesCorruptJournalLineOverCheckpointAndTouchesNothing() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    do {
        let (store, _) = try openStore(folder)
        store.append([.set(path: ["Users", "u0"], value: ["name": "Zed"])])
        store.compact()
        store.close()
    }
    let journal = Array((lineA + "{not json}\n" + lineB).utf8)
    folder.write("journal.jsonl", journal)
    let manifest = folder.read("manifest.json")
    let users = folder.read("documents/Users.json")
    #expect(throws: StoreError.self) { try openStore(folder) }
    #expect(folder.read("journal.jsonl") == journal)
    #expect(folder.read("manifest.json") == manifest)
    #expect(folder.read("documents/Users.json") == users)
}

@Test func refusesCorruptManifestAndTouchesNothing() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    do {
        let (store, _) = try openStore(folder)
        store.close()
    }
    folder.write("manifest.json", "{\"format\":2,")
    folder.write("journal.jsonl", lineA)
    do {
        _ = try openStore(folder)
        Issue.record("open should fail")
    } catch let error as StoreError {
        guard case .corrupt(let file, _, _) = error else {
            Issue.record("expected corrupt, got \(error)")
            return
        }
        #expect(file == folder.file("manifest.json"))
    }
    #expect(folder.read("journal.jsonl") == Array(lineA.utf8))
    #expect(folder.read("manifest.json") == Array("{\"format\":2,".utf8))
}

@Test func refusesCorruptLineInTheMiddleOfAFirstLayoutJournalAndTouchesNothing() throws {
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

