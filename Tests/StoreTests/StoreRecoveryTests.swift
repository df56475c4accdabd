import Foundation
import Testing
import JSON
@testable import Store

// The folder states a `kill -9` can leave during a checkpoint, a segment seal or the migration
// (docs/durability.md, "Crash safety"), made by hand, and what the next start makes of them.

/// A folder with `count` messages in group "g" checkpointed into small segments, and the tree.
private func checkpointedFolder(_ folder: TemporaryFolder, count: Int) throws -> JSONValue {
    var expected = DocumentTree.empty
    let (store, _) = try openStore(folder, segmentBytes: 512)
    for i in 0..<count {
        let mutation = messageMutation(group: "g", id: "m\(1000 + i)", text: "text \(i)", at: Int64(i))
        DocumentTree.apply(mutation, to: &expected)
        store.append([mutation])
    }
    store.compact()
    store.close()
    return expected
}

private func reopenedFullTree(_ folder: TemporaryFolder) throws -> JSONValue {
    let (store, tree) = try openStore(folder, segmentBytes: 512, recentMessages: 4)
    defer { store.close() }
    return try fullTree(store, tree)
}

@Test func aCheckpointCutOffBeforeItsManifestIsIgnoredAndItsJournalReplayed() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    var expected = try checkpointedFolder(folder, count: 30)
    let later = (30..<40).map { messageMutation(group: "g", id: "m\(1000 + $0)", text: "text \($0)", at: Int64($0)) }
    DocumentTree.apply(later, to: &expected)
    // The journal was set aside as generation 9 and the checkpoint got as far as appending to
    // the open segment, starting a new segment (a seal) and writing a manifest aside.
    folder.write("journal.9.jsonl", later.flatMap(\.journalLine))
    let segments = try FileManager.default.contentsOfDirectory(atPath: folder.file("messages/g")).sorted()
    let open = try #require(segments.last { $0.hasSuffix(".jsonl") })
    let handle = try #require(FileHandle(forWritingAtPath: folder.file("messages/g/" + open)))
    handle.seekToEndOfFile()
    handle.write(Data(#"{"id":"m9999","value":{"half":"#.utf8))
    handle.closeFile()
    folder.write("messages/g/99999999.jsonl", #"{"id":"m1035","value":{}}"# + "\n")
    folder.write("messages/g/99999999.idx", "0 24 \"m1035\"\n")
    folder.write("manifest.json.tmp", "{\"format\":2,")
    folder.write("documents/Users.json.tmp", "{")
    #expect(try reopenedFullTree(folder) == expected)
    #expect(folder.read("journal.9.jsonl") == nil)
    #expect(folder.read("messages/g/99999999.jsonl") == nil)
    #expect(folder.read("manifest.json.tmp") == nil)
    #expect(folder.read("documents/Users.json.tmp") == nil)
    #expect(try reopenedFullTree(folder) == expected, "a second start changes nothing")
}

@Test func aJournalTheManifestAlreadyCoversIsDeletedNotReplayed() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let expected = try checkpointedFolder(folder, count: 12)
    let manifest = try JSONValue.parse(folder.read("manifest.json") ?? [])
    let covered = try #require(manifest["journal"]?.int64Value)
    // The crash came after the manifest rename and before the journal's deletion: replaying
    // it again would be harmless, but it must not even be read (it may be long).
    folder.write("journal.\(covered).jsonl", "not even json\n{}\n")
    #expect(try reopenedFullTree(folder) == expected)
    #expect(folder.read("journal.\(covered).jsonl") == nil)
}

@Test func pagesCrossSegmentBoundariesBothWays() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    _ = try checkpointedFolder(folder, count: 100)
    let segments = try FileManager.default.contentsOfDirectory(atPath: folder.file("messages/g")).filter { $0.hasSuffix(".jsonl") }
    #expect(segments.count > 5)
    let (store, _) = try openStore(folder, segmentBytes: 512, recentMessages: 4)
    defer { store.close() }
    var before: String?
    var seen: [String] = []
    while true {
        let page = try store.read(.older(group: "g", before: before, limit: 7))
        seen = page.records.map(\.id) + seen
        guard page.more, let first = page.records.first else { break }
        before = first.id
    }
    #expect(seen == (0..<100).map { "m\(1000 + $0)" })
    var after: String?
    var forward: [String] = []
    while true {
        let page = try store.read(.newer(group: "g", after: after, before: "m1090", limit: 6))
        forward += page.records.map(\.id)
        guard page.more, let last = page.records.last else { break }
        after = last.id
    }
    #expect(forward == (0..<90).map { "m\(1000 + $0)" })
    #expect(try store.read(.one(group: "g", id: "m1042")).records.first?.value["message"] == "text 42")
    #expect(try store.read(.one(group: "g", id: "m0")).records.isEmpty)
}

@Test func aHalfDoneMigrationIsStartedAgainFromTheOldFiles() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    var expected = DocumentTree.empty
    DocumentTree.apply(.set(path: ["Users", "u1"], value: ["name": "Ada"]), to: &expected)
    let snapshotMessages = (0..<20).map { messageMutation(group: "g", id: "m\(1000 + $0)", text: "old \($0)", at: Int64($0)) }
    DocumentTree.apply(snapshotMessages, to: &expected)
    let snapshot = expected.serialized
    let journal = (20..<25).map { messageMutation(group: "g", id: "m\(1000 + $0)", text: "new \($0)", at: Int64($0)) }
    DocumentTree.apply(journal, to: &expected)
    folder.write("tree.json", snapshot)
    folder.write("journal.jsonl", journal.flatMap(\.journalLine))
    // What a kill during the conversion leaves: its marker and new files without a manifest.
    folder.write("migrating", "")
    folder.write("documents/Users.json", "{\"half\"")
    folder.write("messages/g/00000001.jsonl", #"{"id":"m1000","value":{"#)
    folder.write("manifest.json.tmp", "{")
    #expect(try reopenedFullTree(folder) == expected)
    #expect(folder.read("tree.json") == nil)
    #expect(folder.read("manifest.json.tmp") == nil)
    #expect(folder.read("migrating") == nil)
}

@Test func aFolderThatLostItsManifestIsRefusedNotMigrated() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    _ = try checkpointedFolder(folder, count: 5)
    folder.write("journal.jsonl", messageMutation(group: "g", id: "m9", text: "late", at: 9).journalLine)
    let segments = try FileManager.default.subpathsOfDirectory(atPath: folder.file("messages"))
    try FileManager.default.removeItem(atPath: folder.file("manifest.json"))
    #expect {
        _ = try openStore(folder)
    } throws: { error in
        guard case StoreError.corrupt(let file, _, let reason) = error else { return false }
        return file == folder.file("manifest.json") && reason.contains("is missing")
    }
    #expect(try FileManager.default.subpathsOfDirectory(atPath: folder.file("messages")) == segments, "nothing was deleted")
}

@Test func oldFilesLeftAfterAFinishedMigrationAreRemovedNotApplied() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let expected = try checkpointedFolder(folder, count: 5)
    // The kill came after the manifest rename and before tree.json was deleted.
    folder.write("tree.json", "{\"Users\":{\"ghost\":{\"name\":\"Boo\"}}}")
    #expect(try reopenedFullTree(folder) == expected)
    #expect(folder.read("tree.json") == nil)
}
