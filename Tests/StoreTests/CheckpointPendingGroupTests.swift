import Foundation
import Testing
@testable import Store

private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

@Test func recordsArrivingInIdOrderComeBackInOrderAndAreFoundByID() {
    var group = Checkpoint.PendingGroup()
    for id in ["a1", "a2", "a3"] { group.set(id, bytes(id), key: nil) }
    #expect(group.sorted.map(\.id) == ["a1", "a2", "a3"])
    #expect(group.value(of: "a2") == .some(bytes("a2")))
    #expect(group.value(of: "a0") == nil)
    #expect(group.value(of: "a9") == nil)
}

@Test func aRecordSetAgainReplacesTheOneBeforeInPlace() {
    var group = Checkpoint.PendingGroup()
    for id in ["a1", "a2", "a3"] { group.set(id, bytes(id), key: nil) }
    let key = IdempotencyKey(owner: "u1", key: "c1")
    group.set("a2", bytes("new"), key: key)
    group.set("a3", nil, key: nil)
    let sorted = group.sorted
    #expect(sorted.map(\.id) == ["a1", "a2", "a3"])
    #expect(group.value(of: "a2") == .some(bytes("new")))
    #expect(sorted[1].record.key == key)
    #expect(group.value(of: "a3") == .some(nil), "a deletion is pending, not absent")
}

@Test func recordsBelowTheNewestAreMergedIntoTheOrderAtCommit() {
    var group = Checkpoint.PendingGroup()
    for id in ["b2", "b4", "b6"] { group.set(id, bytes(id), key: nil) }
    for id in ["b5", "b1", "b3", "b0"] { group.set(id, bytes(id), key: nil) }
    group.set("b3", bytes("again"), key: nil)
    group.set("b7", bytes("b7"), key: nil)
    #expect(group.sorted.map(\.id) == ["b0", "b1", "b2", "b3", "b4", "b5", "b6", "b7"])
    #expect(group.value(of: "b3") == .some(bytes("again")))
    #expect(group.sorted.map { $0.record.value.map { String(decoding: group.storage[$0], as: UTF8.self) } } ==
            ["b0", "b1", "b2", "again", "b4", "b5", "b6", "b7"])
}

@Test func aPendingGroupMatchesASortedDictionaryOverRandomChanges() {
    // A fixed linear congruential sequence, so the test is the same on every run.
    var state: UInt64 = 18
    func next() -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return state >> 33
    }
    var group = Checkpoint.PendingGroup()
    var model: [String: [UInt8]?] = [:]
    for step in 0..<5_000 {
        // Mostly new ids above every other, sometimes an older or a repeated one.
        let id = next() % 10 < 8 ? String(format: "m%06d", 1000 + step) : String(format: "m%06d", Int(next() % UInt64(1000 + step)))
        let value: [UInt8]? = next() % 10 == 0 ? nil : bytes("v\(step)")
        group.set(id, value, key: nil)
        model.updateValue(value, forKey: id)
    }
    let sorted = group.sorted
    #expect(sorted.map(\.id) == model.keys.sorted())
    #expect(sorted.allSatisfy { model[$0.id]! == $0.record.value.map { Array(group.storage[$0]) } })
    #expect(model.keys.allSatisfy { group.value(of: $0) == model[$0] })
}

@Test func aWholeMessageIsCopiedIntoTheGroupsBufferWithItsKey() {
    var group = Checkpoint.PendingGroup(dropsStored: true, exists: false)
    let key = IdempotencyKey(owner: "u1", key: "c1")
    bytes(#"{"m":1}"#).withUnsafeBytes { group.write("a1", copying: $0, key: key) }
    group.set("a2", bytes(#"{"m":2}"#), key: nil)
    bytes(#"{"m":3}"#).withUnsafeBytes { group.write("a1", copying: $0, key: nil) }
    #expect(group.exists, "a write brings a deleted group back")
    #expect(group.value(of: "a1") == .some(bytes(#"{"m":3}"#)), "the later write replaces the first")
    #expect(group.value(of: "a2") == .some(bytes(#"{"m":2}"#)))
    #expect(group.sorted.map(\.id) == ["a1", "a2"])
    #expect(group.sorted.map(\.record.key) == [nil, nil], "the later write's key (none) replaces the first's")
}
