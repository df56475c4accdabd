import Foundation
import Testing
import JSON
@testable import Store

// Segments, indexes and manifests damaged in the ways the store fuzz target (Fuzz/store, see
// docs/fuzzing.md) found: a start that fails leaves the folder as it was, and a read of damaged
// history fails with a defined error instead of trapping or asking for gigabytes.

/// Group "g" with `count` messages checkpointed into segments of about 512 bytes.
private func segmentedFolder(_ folder: TemporaryFolder, count: Int) throws {
    let (store, _) = try openStore(folder, segmentBytes: 512)
    for i in 0..<count {
        store.append([messageMutation(group: "g", id: "m\(1000 + i)", text: "text \(i)", at: Int64(i))])
    }
    store.compact()
    store.close()
}

/// Every file of the data folder but the lock, with its bytes as text (for readable failures).
private func snapshot(_ folder: TemporaryFolder) -> [String: String] {
    var files: [String: String] = [:]
    let enumerator = FileManager.default.enumerator(atPath: folder.data)
    while let path = enumerator?.nextObject() as? String {
        var isFolder: ObjCBool = false
        guard path != "lock", FileManager.default.fileExists(atPath: folder.file(path), isDirectory: &isFolder), !isFolder.boolValue
        else { continue }
        files[path] = folder.read(path).map { String(decoding: $0, as: UTF8.self) }
    }
    return files
}

/// The name of group "g"'s newest segment, `messages/g/<seq>.jsonl`.
private func openSegment(_ folder: TemporaryFolder) throws -> String {
    let names = try FileManager.default.contentsOfDirectory(atPath: folder.file("messages/g"))
    return "messages/g/" + (try #require(names.filter { $0.hasSuffix(".jsonl") }.max()))
}

/// Opens the folder, expecting `.corruptSegment` and the folder unchanged.
private func expectRefusedUntouched(_ folder: TemporaryFolder, recentMessages: Int = 4) {
    let before = snapshot(folder)
    #expect {
        _ = try openStore(folder, segmentBytes: 512, recentMessages: recentMessages)
    } throws: { error in
        guard case .corruptSegment = error as? StoreError else { return false }
        return true
    }
    #expect(snapshot(folder) == before, "a refused start changed the folder")
}

private let laterLine = messageMutation(group: "g", id: "m2000", text: "later", at: 2000).journalLine

@Test func aCorruptRecordAtAGroupsEndStopsTheStartBeforeTheJournalIsApplied() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    try segmentedFolder(folder, count: 12)
    let path = try openSegment(folder)
    var bytes = try #require(folder.read(path))
    let lastLine = try #require(bytes.dropLast().lastIndex(of: 0x0A)) + 1
    bytes[lastLine] = UInt8(ascii: "[")
    folder.write(path, bytes)
    // Before the fix the journal was applied as a checkpoint first, and the window read after it.
    folder.write("journal.jsonl", laterLine)
    expectRefusedUntouched(folder)
}

@Test func aGroupsCommittedBytesThatDoNotEndALineStopTheStart() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    try segmentedFolder(folder, count: 12)
    let path = try openSegment(folder)
    var bytes = try #require(folder.read(path))
    // The record ran one byte longer: its newline lies past the committed length, and the next
    // checkpoint would have appended over it.
    bytes[bytes.count - 1] = UInt8(ascii: " ")
    bytes.append(0x0A)
    folder.write(path, bytes)
    folder.write("journal.jsonl", laterLine)
    expectRefusedUntouched(folder)
}

@Test func aGroupsSegmentCutShortStopsTheStart() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    try segmentedFolder(folder, count: 12)
    let path = try openSegment(folder)
    let bytes = try #require(folder.read(path))
    // Cut at a line end: every remaining line parses, only the length gives it away.
    let cut = try #require(bytes.dropLast().lastIndex(of: 0x0A)) + 1
    folder.write(path, Array(bytes[..<cut]))
    folder.write("journal.jsonl", laterLine)
    expectRefusedUntouched(folder)
}

@Test func aMissingSealedSegmentFailsTheReadsThatReachIt() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    try segmentedFolder(folder, count: 30)
    try FileManager.default.removeItem(atPath: folder.file("messages/g/00000001.jsonl"))
    let (store, _) = try openStore(folder, segmentBytes: 512, recentMessages: 2)
    defer { store.close() }
    #expect {
        _ = try store.read(.newer(group: "g", after: nil, before: nil, limit: 5))
    } throws: { error in
        guard case .corruptSegment(_, _, let reason) = error as? StoreError else { return false }
        return reason.contains("missing")
    }
}

@Test func indexLinesWithHugeNumbersFailTheReadInsteadOfTrapping() throws {
    for line in [#"99999999999999999999 80 "m1000""#, #"0 9999999999 "m1000""#] {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        try segmentedFolder(folder, count: 30)
        let path = "messages/g/00000001.idx"
        let index = try #require(folder.read(path))
        let firstEnd = try #require(index.firstIndex(of: 0x0A))
        folder.write(path, Array(line.utf8) + index[firstEnd...])
        let (store, _) = try openStore(folder, segmentBytes: 512, recentMessages: 2)
        defer { store.close() }
        #expect(throws: StoreError.self, "index line \(line)") {
            _ = try store.read(.newer(group: "g", after: nil, before: nil, limit: 5))
        }
    }
}

@Test func aManifestWithNumbersOutOfRangeIsRefusedUntouched() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    try segmentedFolder(folder, count: 12)
    let manifest = String(decoding: try #require(folder.read("manifest.json")), as: UTF8.self)
    let range = try #require(manifest.range(of: #""bytes":"#))
    folder.write("manifest.json", manifest.replacingCharacters(in: range, with: #""bytes":-"#))
    let before = snapshot(folder)
    #expect {
        _ = try openStore(folder, segmentBytes: 512)
    } throws: { error in
        guard case .corrupt = error as? StoreError else { return false }
        return true
    }
    #expect(snapshot(folder) == before)
}

@Test func aSetAsideJournalWithoutAManifestIsRefusedNotMigrated() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    // Only a checkpoint sets a journal aside, and only after a manifest exists; migrating this
    // folder as the first layout would have deleted journal.jsonl and then failed on the other.
    folder.write("journal.jsonl", laterLine)
    folder.write("journal.3.jsonl", Array("not a journal line\n".utf8) + laterLine)
    let before = snapshot(folder)
    #expect {
        _ = try openStore(folder)
    } throws: { error in
        guard case .corrupt(_, _, let reason) = error as? StoreError else { return false }
        return reason.contains("journal.3.jsonl")
    }
    #expect(snapshot(folder) == before)
}

@Test func anIndexThatDisagreesWithItsManifestFailsTheRead() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    try segmentedFolder(folder, count: 30)
    // The manifest's id range of segment 1 no longer covers its index: a page found by the
    // index and a message looked up by the range would disagree.
    let manifest = String(decoding: try #require(folder.read("manifest.json")), as: UTF8.self)
    folder.write("manifest.json", manifest.replacingOccurrences(of: #""first":"m1000""#, with: #""first":"m1999""#))
    let (store, _) = try openStore(folder, segmentBytes: 512, recentMessages: 2)
    defer { store.close() }
    #expect {
        _ = try store.read(.newer(group: "g", after: nil, before: nil, limit: 5))
    } throws: { error in
        guard case .corrupt(_, _, let reason) = error as? StoreError else { return false }
        return reason.contains("manifest")
    }
}
