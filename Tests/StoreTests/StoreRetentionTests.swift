import Foundation
import Testing
import JSON
@testable import Store

// Retention deletes whole sealed segments at a checkpoint (docs/durability.md, "Checkpoints"),
// and the idempotency index follows what the segments hold.

/// Appends messages `m1000`... of group "g" (with `clientId` `c<n>` from user "u1") and waits
/// for the checkpoint that holds them.
private func storeMessages(_ store: Store, _ range: Range<Int>) {
    let waiter = CheckpointWaiter(store)
    for i in range {
        store.append([.set(path: ["Messages", "g", "m\(1000 + i)"], value: [
            "message": .string("text \(i)"), "user": "u1", "createdAt": .integer(Int64(i)), "clientId": .string("c\(i)"),
        ])])
    }
    store.compact()
    waiter.wait()
}

private func segmentFiles(_ folder: TemporaryFolder) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: folder.file("messages/g")).filter { $0.hasSuffix(".jsonl") }.sorted()
}

private let fields = IdempotencyFields(owner: "user", key: "clientId")

@Test func retentionDeletesTheSealedSegmentsBeyondTheNewestMessages() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let (store, _) = try openStore(folder, segmentBytes: 512, idempotencyFields: fields)
    storeMessages(store, 0..<100)
    let before = try segmentFiles(folder)
    #expect(before.count > 5)
    store.retention = MessageRetention(keepNewest: 20)
    let waiter = CheckpointWaiter(store)
    store.append([messageMutation(group: "g", id: "m1100", text: "one more", at: 100)])
    store.compact()
    waiter.wait()
    let report = try #require(waiter.reports.values.first)
    let dropped = try #require(report.dropped["g"])
    var kept: [String] = []
    var older: String?
    while true {
        let page = try store.read(.older(group: "g", before: older, limit: 30))
        kept = page.records.map(\.id) + kept
        guard page.more, let first = page.records.first else { break }
        older = first.id
    }
    // What is left is the newest messages, at least 20 of them, starting after the deleted range.
    #expect(kept == (1000 - kept.count + 101..<1101).map { "m\($0)" })
    #expect(kept.count >= 21)
    #expect(kept.first.map { $0 > dropped.through } == true)
    #expect(dropped.records == 101 - kept.count)
    let after = try segmentFiles(folder)
    #expect(after.count < before.count)
    #expect(after.last == before.last, "the open segment stays")
    #expect(Set(after).isSubset(of: Set(before + [after.last!])))
    // The keys of deleted messages are gone; those of kept ones still find their message.
    #expect(try store.read(.sentBy(IdempotencyKey(owner: "u1", key: "c0"))).records.isEmpty)
    let newest = try store.read(.sentBy(IdempotencyKey(owner: "u1", key: "c99")))
    #expect(newest.records.map(\.id) == ["m1099"])
    #expect(newest.group == "g")
    store.close()
    // A start finds the same.
    let (again, tree) = try openStore(folder, segmentBytes: 512, idempotencyFields: fields)
    defer { again.close() }
    #expect(tree["Messages"]?["g"]?["m1000"] == nil)
    #expect(again.storedMessageCounts["g"] == kept.count)
}

@Test func retentionByAgeDeletesSegmentsWhoseNewestIdIsOlder() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let (store, _) = try openStore(folder, segmentBytes: 512, idempotencyFields: fields)
    defer { store.close() }
    storeMessages(store, 0..<60)
    store.retention = MessageRetention(before: "m1030")
    let waiter = CheckpointWaiter(store)
    store.append([messageMutation(group: "g", id: "m1060", text: "later", at: 60)])
    store.compact()
    waiter.wait()
    let dropped = try #require(waiter.reports.values.first?.dropped["g"])
    #expect(dropped.through < "m1030")
    let remaining = try store.read(.newer(group: "g", after: nil, before: nil, limit: 100)).records.map(\.id)
    #expect(remaining.first.map { $0 > dropped.through && $0 <= "m1030" } == true)
    #expect(remaining.last == "m1060")
}

@Test func theIdempotencyIndexIsReadBackFromTheSegmentIndexesAtStart() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let (store, _) = try openStore(folder, segmentBytes: 512, idempotencyFields: fields)
    storeMessages(store, 0..<40)
    store.close()
    let (again, _) = try openStore(folder, segmentBytes: 512, recentMessages: 2, idempotencyFields: fields)
    defer { again.close() }
    // `.sentBy` waits for the index to be built, so the answer is certain.
    let found = try again.read(.sentBy(IdempotencyKey(owner: "u1", key: "c3")))
    #expect(found.records.map(\.id) == ["m1003"])
    #expect(found.records.first?.value["message"] == "text 3")
    #expect(try again.read(.sentBy(IdempotencyKey(owner: "u2", key: "c3"))).records.isEmpty)
    #expect(again.mayHaveStored(IdempotencyKey(owner: "u1", key: "c39")))
    #expect(!again.mayHaveStored(IdempotencyKey(owner: "u1", key: "c40")))
    #expect(again.files.keys.count == 40)
}
