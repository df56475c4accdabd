import Dispatch
import Foundation
import Testing
import JSON
@testable import Store

@Test func groupCommitReportsEveryAppendDurable() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let (store, _) = try openStore(folder)
    let reported = Recorder<UInt64>()
    store.onDurable = { reported.add($0) }
    let issued = Recorder<UInt64>()
    DispatchQueue.concurrentPerform(iterations: 8) { worker in
        for i in 0..<125 {
            issued.add(store.append([messageMutation(group: "g\(worker)", id: "m\(i)", text: "hi", at: Int64(i))]))
        }
    }
    store.close()
    #expect(Set(issued.values) == Set(1...1000))
    let tickets = reported.values
    #expect(tickets.last == 1000)
    #expect(zip(tickets, tickets.dropFirst()).allSatisfy { $0 < $1 })
    let statistics = store.statistics
    #expect(statistics.mutations == 1000)
    #expect(statistics.fsyncs == statistics.batches)
    #expect(statistics.batches == UInt64(tickets.count))
    #expect(statistics.batchSize.count == statistics.batches)
    #expect(statistics.flushLatency.count == statistics.batches)
    #expect(store.durableTicket == 1000)

    let (reopened, tree) = try openStore(folder)
    reopened.close()
    #expect(tree["Messages"]?.objectValue?.count == 8)
    #expect((0..<8).allSatisfy { tree["Messages"]?["g\($0)"]?.objectValue?.count == 125 })
}

@Test func durabilityNoneSkipsFsync() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let (store, _) = try openStore(folder, durability: .none)
    let reported = Recorder<UInt64>()
    store.onDurable = { reported.add($0) }
    let ticket = store.append([messageMutation(group: "g", id: "m", text: "x", at: 1)])
    store.close()
    #expect(reported.values.last == ticket)
    #expect(store.statistics.fsyncs == 0)
    #expect(store.statistics.batches >= 1)
}

@Test func journalBytesGrowAndSignalCompaction() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let (store, _) = try openStore(folder, compactAfterBytes: 1000)
    let done = DispatchSemaphore(value: 0)
    let mutation = messageMutation(group: "g", id: "m", text: String(repeating: "x", count: 100), at: 1)
    let lastTicket: UInt64 = 20
    store.onDurable = { if $0 == lastTicket { done.signal() } }
    #expect(!store.needsCompaction)
    for _ in 0..<lastTicket { store.append([mutation]) }
    done.wait()
    #expect(store.journalBytes == 20 * mutation.journalLine.count)
    #expect(store.needsCompaction)
    store.compact(snapshot: { DocumentTree.empty })
    #expect(!store.needsCompaction, "a queued compaction is not requested twice")
    store.close()
    #expect(store.journalBytes == 0)
    #expect(store.statistics.compactions == 1)
}

@Test func compactionThenReopenSeesSameTree() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    var live = DocumentTree.empty
    let before = (0..<50).map { messageMutation(group: "g1", id: "m\($0)", text: "before \($0)", at: Int64($0)) }
    let after = (0..<5).map { messageMutation(group: "g2", id: "n\($0)", text: "after \($0)", at: Int64($0)) }
        + [.delete(path: ["Messages", "g1", "m3"])]
    do {
        let (store, _) = try openStore(folder)
        DocumentTree.apply(before, to: &live)
        store.append(before)
        let snapshot = live
        store.compact(snapshot: { snapshot })
        DocumentTree.apply(after, to: &live)
        store.append(after)
        store.close()
        #expect(store.statistics.compactions == 1)
    }
    #expect(folder.read("tree.json.tmp") == nil)
    let journal = folder.read("journal.jsonl") ?? []
    #expect(journal == after.flatMap(\.journalLine), "only the appends after the compaction remain")
    let (store, tree) = try openStore(folder)
    store.close()
    #expect(tree == live)
}

@Test func compactionWritesBytesFromTheCaller() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let (store, _) = try openStore(folder)
    store.append([.set(path: ["Users", "u1"], value: ["name": "Ada"])])
    store.compact(writingSnapshot: { out in out.append(contentsOf: Array(#"{"Users":{"u1":{"name":"Ada"}}}"#.utf8)) })
    store.close()
    #expect(folder.read("tree.json") == Array(#"{"Users":{"u1":{"name":"Ada"}}}"#.utf8))
    #expect(folder.read("journal.jsonl") == [])
}
