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

@Test func aFullJournalStartsACheckpointByItself() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let (store, _) = try openStore(folder, compactAfterBytes: 1000)
    let waiter = CheckpointWaiter(store)
    let mutations = (0..<20).map { messageMutation(group: "g", id: "m\($0 + 10)", text: String(repeating: "x", count: 100), at: 1) }
    var last: UInt64 = 0
    for mutation in mutations { last = store.append([mutation]) }
    waiter.wait()
    store.close()
    let report = try #require(waiter.reports.values.first)
    #expect(report.ticket >= 1 && report.ticket <= last)
    #expect(report.lastIDs["g"] != nil)
    #expect(store.statistics.compactions >= 1)
    let (reopened, tree) = try openStore(folder)
    reopened.close()
    #expect(tree["Messages"]?["g"]?.objectValue?.count == 20)
}

@Test func checkpointThenReopenSeesSameTree() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    var live = DocumentTree.empty
    let before = (0..<50).map { messageMutation(group: "g1", id: "m\($0 + 10)", text: "before \($0)", at: Int64($0)) }
        + [.set(path: ["Users", "u1"], value: ["name": "Ada"])]
    let after = (0..<5).map { messageMutation(group: "g2", id: "n\($0)", text: "after \($0)", at: Int64($0)) }
        + [.delete(path: ["Messages", "g1", "m13"]), .set(path: ["Messages", "g1", "m20", "receivedBy", "u1"], value: 7)]
    do {
        let (store, _) = try openStore(folder)
        let waiter = CheckpointWaiter(store)
        DocumentTree.apply(before, to: &live)
        store.append(before)
        store.compact()
        waiter.wait()
        DocumentTree.apply(after, to: &live)
        store.append(after)
        store.close()
        #expect(store.statistics.compactions == 1)
    }
    let journal = folder.read("journal.jsonl") ?? []
    #expect(journal == after.flatMap(\.journalLine), "only the appends after the checkpoint remain")
    #expect(folder.read("documents/Users.json") == Array(#"{"u1":{"name":"Ada"}}"#.utf8) + [0x0A])
    let (store, tree) = try openStore(folder)
    defer { store.close() }
    #expect(tree == live)
    #expect(try fullTree(store, tree) == live)
    #expect(folder.read("journal.jsonl") == [], "start-up applies the journal as a checkpoint")
}

@Test func appendsKeepCommittingWhileACheckpointRuns() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let (store, _) = try openStore(folder, durability: .none, compactAfterBytes: 4096)
    let waiter = CheckpointWaiter(store)
    let durable = Recorder<UInt64>()
    store.onDurable = { durable.add($0) }
    var expected = DocumentTree.empty
    for i in 0..<2000 {
        let mutation = messageMutation(group: "g\(i % 7)", id: "m\(100_000 + i)", text: "text \(i)", at: Int64(i))
        DocumentTree.apply(mutation, to: &expected)
        store.append([mutation])
    }
    waiter.wait()
    store.close()
    #expect(durable.values.last == 2000)
    #expect(store.statistics.compactions >= 1)
    let (reopened, tree) = try openStore(folder, recentMessages: 10)
    defer { reopened.close() }
    #expect(tree["Messages"]?["g0"]?.objectValue?.count == 10, "start-up keeps only the newest messages of a group")
    #expect(try fullTree(reopened, tree) == expected)
}

/// How the journal opened at start ends in `theNextJournalIsTheSpareOfZerosWrittenAhead`.
enum FirstJournalEnd: CaseIterable, Sendable {
    /// `compact()` sets it aside after its first line.
    case compacted
    /// `replacesFirstJournal`: the first write after the spare is ready sets it aside.
    case replaced
    /// Neither: it grows, far below `compactAfterBytes`.
    case kept
}

@Test(arguments: FirstJournalEnd.allCases)
func theNextJournalIsTheSpareOfZerosWrittenAheadAndReplaysAsUsual(end: FirstJournalEnd) throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let journalBytes = 64 << 10
    var expected = DocumentTree.empty
    do {
        let (store, _) = try openStore(folder, compactAfterBytes: journalBytes)
        defer { store.close() }
        store.replacesFirstJournal = end == .replaced
        // The compactor writes the spare at start; wait for it (it is what this test is about).
        while !store.monitor.withLock({ store.spareReady }) { usleep(1000) }
        #expect((folder.read("journal.spare")?.count ?? 0) >= journalBytes + Checkpoint.pacedBytes)
        #expect(folder.read("journal.spare")?.allSatisfy { $0 == 0 } == true)
        let waiter = CheckpointWaiter(store)
        for i in 0..<5 {
            let mutation = messageMutation(group: "g", id: "m\(i)", text: "message \(i)", at: Int64(i))
            DocumentTree.apply(mutation, to: &expected)
            let ticket = store.append([mutation])
            while store.durableTicket < ticket { usleep(100) }
            guard i == 0 else { continue }
            if end == .compacted { store.compact() }
            if end != .kept {
                #expect(waiter.wait(seconds: 60), "the first journal was not set aside for the spare")
            }
        }
        #expect(store.statistics.compactions == (end == .kept ? 0 : 1))
    }
    let journal = try #require(folder.read("journal.jsonl"))
    if end == .kept {
        #expect(journal.last == 0x0A, "the first journal, grown line by line")
        #expect(journal.split(separator: 0x0A).count == 5)
    } else {
        // The spare became the journal after the first line: four lines, then its zeros.
        #expect(journal.count >= journalBytes + Checkpoint.pacedBytes)
        #expect(journal.split(separator: 0x0A).filter { $0.first == UInt8(ascii: "{") }.count == 4)
        #expect(journal.last == 0)
    }
    let (store, tree) = try openStore(folder, compactAfterBytes: journalBytes)
    defer { store.close() }
    #expect(try fullTree(store, tree) == expected)
}

/// Under load the senders fill a journal while the checkpoint of the one before runs, and the
/// writer sets it aside the moment that checkpoint ends: the spare must be ready by then, or the
/// next journal grows line by line. So the compactor writes it before each checkpoint, a quarter
/// longer than `compactAfterBytes` for the lines that come while the checkpoint finishes.
@Test func theSpareForTheNextJournalIsReadyWhenEachCheckpointEnds() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let journalBytes = 64 << 10
    let (store, _) = try openStore(folder, compactAfterBytes: journalBytes)
    defer { store.close() }
    let spareAtEnd = Recorder<Bool>()
    let checkpointEnded = DispatchSemaphore(value: 0)
    store.onCheckpoint = { [spareAtEnd, unowned store] _ in
        spareAtEnd.add(store.monitor.withLock { store.spareReady })
        checkpointEnded.signal()
    }
    while !store.monitor.withLock({ store.spareReady }) { usleep(1000) }
    let text = String(repeating: "x", count: 1000)
    var id = 0
    for _ in 0..<3 {
        // Just past `compactAfterBytes`: the journal is set aside after the last of these.
        var ticket: UInt64 = 0
        for _ in 0..<(journalBytes / 1000 + 1) {
            ticket = store.append([messageMutation(group: "g", id: "m\(id)", text: text, at: Int64(id))])
            id += 1
        }
        while store.durableTicket < ticket { usleep(100) }
        #expect(checkpointEnded.wait(timeout: .now() + .seconds(60)) == .success, "no checkpoint")
        #expect((folder.read("journal.jsonl")?.count ?? 0) >= Store.spareBytes(compactAfterBytes: journalBytes),
                "the journal is the spare written before the last checkpoint")
    }
    #expect(spareAtEnd.values == [true, true, true])
    #expect(Store.spareBytes(compactAfterBytes: journalBytes) >= journalBytes + journalBytes / 4)
}

@Test func aBatchWaitsForTheSendersOfTheLastOnlyAFractionOfItsFlush() {
    let last = LastFlush(appends: 64, end: 10_000_000, nanoseconds: 4_000_000)
    #expect(last.gatherDeadline(queuedAppends: 0) == 12_000_000, "half of a 4 ms flush after it ended")
    #expect(last.gatherDeadline(queuedAppends: 63) == 12_000_000)
    #expect(last.gatherDeadline(queuedAppends: 64) == nil, "as many as the last batch: no wait")
    #expect(last.gatherDeadline(queuedAppends: 100) == nil)
    let slow = LastFlush(appends: 8, end: 10_000_000, nanoseconds: 50_000_000)
    #expect(slow.gatherDeadline(queuedAppends: 1) == 10_000_000 + LastFlush.longestGatherNanoseconds, "capped")
    let fast = LastFlush(appends: 8, end: 10_000_000, nanoseconds: 60_000)
    #expect(fast.gatherDeadline(queuedAppends: 1) == 10_030_000, "a fast disk waits microseconds")
    #expect(LastFlush(appends: 1, end: 10_000_000, nanoseconds: 4_000_000).gatherDeadline(queuedAppends: 0) == nil,
            "a lone sender's next message never waits")
    #expect(LastFlush().gatherDeadline(queuedAppends: 0) == nil)
}

@Test func sendersThatWaitForTheirAcknowledgementAreAllAcknowledged() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let (store, _) = try openStore(folder)
    // Eight closed-loop senders, one message in flight each, for 20 rounds: each sends again
    // once its last message is durable, which is what the writer's gathering waits for.
    DispatchQueue.concurrentPerform(iterations: 8) { sender in
        for round in 0..<20 {
            let ticket = store.append([messageMutation(group: "g\(sender)", id: "m\(round)", text: "hi", at: Int64(round))])
            while store.durableTicket < ticket { usleep(100) }
        }
    }
    store.close()
    #expect(store.durableTicket == 160)
    #expect(store.statistics.mutations == 160)
    let (reopened, tree) = try openStore(folder)
    reopened.close()
    #expect((0..<8).allSatisfy { tree["Messages"]?["g\($0)"]?.objectValue?.count == 20 })
}

@Test func batchesWaitOnlyWhileACheckpointRunsAndTheJournalHasOutgrownItsSize() {
    let size = 64 << 20
    let longest = CheckpointPace.longestDelayNanoseconds
    #expect(CheckpointPace.delay(journalBytes: 3 * size, checkpointRunning: false, compactAfterBytes: size) == 0,
            "no checkpoint runs: the writer rotates instead")
    #expect(CheckpointPace.delay(journalBytes: size, checkpointRunning: true, compactAfterBytes: size) == 0)
    #expect(CheckpointPace.delay(journalBytes: size + size / 4, checkpointRunning: true, compactAfterBytes: size) == longest / 4)
    #expect(CheckpointPace.delay(journalBytes: size + size / 2, checkpointRunning: true, compactAfterBytes: size) == longest / 2)
    #expect(CheckpointPace.delay(journalBytes: 2 * size, checkpointRunning: true, compactAfterBytes: size) == longest)
    #expect(CheckpointPace.delay(journalBytes: 10 * size, checkpointRunning: true, compactAfterBytes: size) == longest, "capped")
}

@Test func batchesHeldBackBehindALaggingCheckpointAreStillAllAcknowledged() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let (store, _) = try openStore(folder, compactAfterBytes: 4096)
    // As if a checkpoint were running: the journal then grows past its size instead of rotating.
    store.monitor.withLock { store.compactionQueued = true }
    let reported = Recorder<UInt64>()
    store.onDurable = { reported.add($0) }
    var last: UInt64 = 0
    for i in 0..<200 {
        last = store.append([messageMutation(group: "g", id: String(format: "m%04d", i), text: "hello", at: Int64(i))])
        while (reported.values.last ?? 0) < last { usleep(100) }
    }
    let heldBack = store.statistics.batchesHeldBack
    #expect(heldBack > 0, "the journal passed 4 KiB while the checkpoint ran")
    #expect(heldBack < 200, "the first 4 KiB went unheld")
    store.monitor.withLock { store.compactionQueued = false }
    store.close()
    #expect(reported.values.last == 200)
    #expect(store.statistics.mutations == 200)
}

@Test func startUpKeepsMessagesStoredOutOfIdOrderThatSortIntoTheNewestWindow() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    // m3 is stored after m4 (a clock that went back, another node's clock): its record lives
    // outside the id order, in `relocated`; m0 the same, but below the window's oldest.
    do {
        let (store, _) = try openStore(folder)
        let waiter = CheckpointWaiter(store)
        for batch in [["m1", "m2", "m4"], ["m3", "m0"]] {
            store.append(batch.map { messageMutation(group: "g", id: $0, text: $0, at: 0) })
            store.compact()
            waiter.wait()
        }
        store.close()
    }
    for (kept, expected) in [(3, ["m2", "m3", "m4"]), (1000, ["m0", "m1", "m2", "m3", "m4"])] {
        let (store, tree) = try openStore(folder, recentMessages: kept)
        store.close()
        #expect(tree["Messages"]?["g"]?.objectValue?.keys.sorted() == expected, "the newest \(kept)")
        #expect(tree["Messages"]?["g"]?["m3"]?["message"] == "m3")
    }
}
