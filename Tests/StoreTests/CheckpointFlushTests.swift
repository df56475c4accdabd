import Foundation
import Testing
import JSON
@testable import Store

// What a checkpoint's flush writes for a group, checked against the manifest that names it:
// segments that fill and give way to new ones, records outside the id order, and keys.

@Test func theManifestDescribesEverySegmentAndRelocatedRecordItsFlushesWrote() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let (store, _) = try openStore(folder, segmentBytes: 512, idempotencyFields: IdempotencyFields(owner: "user", key: "clientId"))
    let waiter = CheckpointWaiter(store)
    func message(_ number: Int, key: Bool) -> Mutation {
        var value: [String: JSONValue] = ["message": .string("text \(number)"), "user": "u1"]
        if key { value["clientId"] = .string("c\(number)") }
        return .set(path: ["Messages", "g", "m\(2000 + number)"], value: .object(value))
    }
    // Three checkpoints: the first two fill segments; the third adds a message below the
    // stored ids and changes a stored one, both written outside the id order, then new ones.
    let batches: [[Mutation]] = [
        (0..<12).map { message($0, key: $0 % 3 == 0) },
        (12..<20).map { message($0, key: $0 % 2 == 0) },
        [message(-1, key: true), .set(path: ["Messages", "g", "m2003", "receivedBy", "u2"], value: 7)]
            + (20..<23).map { message($0, key: false) },
    ]
    for batch in batches {
        store.append(batch)
        store.compact()
        waiter.wait()
    }
    store.close()

    let manifestBytes = try #require(folder.read("manifest.json"))
    let catalog = try #require(try Manifest(JSONValue.parse(manifestBytes)).groups["g"])
    #expect(catalog.segments.count > 2, "segments of 512 bytes filled and new ones began")
    #expect(catalog.segments.map(\.sequence) == Array(1...catalog.segments.count))
    var inOrder: [String] = []
    for segment in catalog.segments {
        let name = "messages/g/" + StoreLayout.sequenceName(segment.sequence)
        let segmentFile = try #require(folder.read(name + ".jsonl"))
        let indexFile = try #require(folder.read(name + ".idx"))
        #expect(segmentFile.count == segment.bytes, "segment \(segment.sequence)'s length")
        #expect(indexFile.count == segment.indexBytes, "index \(segment.sequence)'s length")
        let entries = try SegmentFormat.parseIndex(indexFile)
        #expect(entries.count == segment.records)
        #expect(entries.filter { $0.key != nil }.count == segment.keyed)
        #expect(entries.first?.id ?? "" == segment.first)
        #expect(entries.last?.id ?? "" == segment.last)
        for entry in entries {
            let record = try segmentFile[entry.offset..<entry.offset + entry.length].withUnsafeBytes(SegmentFormat.parseRecord)
            #expect(record.id == entry.id && !record.moved)
            #expect(entry.key.map { $0.key } == record.value?["clientId"]?.stringValue)
        }
        inOrder += entries.map(\.id)
    }
    #expect(inOrder == (0..<23).map { "m\(2000 + $0)" })
    #expect(catalog.relocated.keys.sorted() == ["m1999", "m2003"])
    for (id, location) in catalog.relocated {
        let segmentFile = try #require(folder.read("messages/g/" + StoreLayout.sequenceName(location.sequence) + ".jsonl"))
        let record = try segmentFile[location.offset..<location.offset + location.length].withUnsafeBytes(SegmentFormat.parseRecord)
        #expect(record.id == id && record.moved)
    }
    let (reopened, _) = try openStore(folder, segmentBytes: 512)
    defer { reopened.close() }
    #expect(try reopened.read(.one(group: "g", id: "m2003")).records.first?.value["receivedBy"]?["u2"] == 7)
    #expect(try reopened.read(.one(group: "g", id: "m1999")).records.first?.value["message"] == "text -1")
}

@Test func idsThatNeedEscapingOrAreNotASCIIGoThroughACheckpointInStringOrder() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let (store, _) = try openStore(folder)
    let waiter = CheckpointWaiter(store)
    // Plain ASCII ids are kept as bytes, the others as strings: one order at the commit.
    let ids = ["m1", "m\"2", "m3", "mé4", "m5", "m\\6"]
    store.append(ids.map { .set(path: ["Messages", "g", $0], value: ["message": .string($0), "user": "u1"]) })
    store.compact()
    waiter.wait()
    store.close()

    let manifestBytes = try #require(folder.read("manifest.json"))
    let catalog = try #require(try Manifest(JSONValue.parse(manifestBytes)).groups["g"])
    let segment = try #require(catalog.segments.first)
    #expect(catalog.segments.count == 1 && catalog.relocated.isEmpty)
    let name = "messages/g/" + StoreLayout.sequenceName(segment.sequence)
    let segmentFile = try #require(folder.read(name + ".jsonl"))
    let entries = try SegmentFormat.parseIndex(try #require(folder.read(name + ".idx")))
    #expect(entries.map(\.id) == ids.sorted())
    #expect((segment.first, segment.last) == (ids.sorted().first!, ids.sorted().last!))
    for entry in entries {
        let record = try segmentFile[entry.offset..<entry.offset + entry.length].withUnsafeBytes(SegmentFormat.parseRecord)
        #expect(record.id == entry.id && record.value?["message"]?.stringValue == entry.id)
    }
    let (reopened, _) = try openStore(folder)
    defer { reopened.close() }
    for id in ids {
        #expect(try reopened.read(.one(group: "g", id: id)).records.first?.value["message"]?.stringValue == id)
    }
}
