import Foundation
import Testing
@testable import Store

private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// A record as `forEachRecord` hands it out.
private typealias Entry = (id: Checkpoint.PendingGroup.RecordID, record: Checkpoint.PendingGroup.Record)

/// `group`'s records in the order `forEachRecord` gives them.
private func records(of group: Checkpoint.PendingGroup) -> [Entry] {
    var records: [Entry] = []
    group.forEachRecord { records.append(($0, $1)) }
    return records
}

/// The ids of `group`'s records in the order `forEachRecord` gives them.
private func ids(_ group: Checkpoint.PendingGroup) -> [String] { records(of: group).map { group.name(of: $0.id) } }

@Test func recordsArrivingInIdOrderComeBackInOrderAndAreFoundByID() {
    var group = Checkpoint.PendingGroup()
    for id in ["a1", "a2", "a3"] { group.set(id, bytes(id), key: nil) }
    #expect(ids(group) == ["a1", "a2", "a3"])
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
    let sorted = records(of: group)
    #expect(sorted.map { group.name(of: $0.id) } == ["a1", "a2", "a3"])
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
    #expect(ids(group) == ["b0", "b1", "b2", "b3", "b4", "b5", "b6", "b7"])
    #expect(group.value(of: "b3") == .some(bytes("again")))
    #expect(records(of: group).map { $0.record.value.map { String(decoding: group.storage[$0], as: UTF8.self) } } ==
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
    let sorted = records(of: group)
    #expect(sorted.map { group.name(of: $0.id) } == model.keys.sorted())
    #expect(sorted.allSatisfy { model[group.name(of: $0.id)]! == $0.record.value.map { Array(group.storage[$0]) } })
    #expect(model.keys.allSatisfy { group.value(of: $0) == model[$0] })
}

@Test func aWholeMessageIsCopiedIntoTheGroupsBufferWithItsKey() {
    var group = Checkpoint.PendingGroup(dropsStored: true, exists: false)
    let key = IdempotencyKey(owner: "u1", key: "c1")
    bytes(#"{"m":1}"#).withUnsafeBytes { value in bytes("a1").withUnsafeBytes { group.write($0, copying: value, key: key) } }
    group.set("a2", bytes(#"{"m":2}"#), key: nil)
    bytes(#"{"m":3}"#).withUnsafeBytes { value in bytes("a1").withUnsafeBytes { group.write($0, copying: value, key: nil) } }
    #expect(group.exists, "a write brings a deleted group back")
    #expect(group.value(of: "a1") == .some(bytes(#"{"m":3}"#)), "the later write replaces the first")
    #expect(group.value(of: "a2") == .some(bytes(#"{"m":2}"#)))
    #expect(ids(group) == ["a1", "a2"])
    #expect(records(of: group).map(\.record.key) == [nil, nil], "the later write's key (none) replaces the first's")
}

@Test func idsThatAreNotPlainASCIISortAsStringsAmongTheOthers() {
    // "e" + U+0301 is "é" to a string, which sorts after "f"; its first byte sorts before.
    var group = Checkpoint.PendingGroup()
    for id in ["a1", "f", "e\u{301}", "g", "m\"q", "m\\q", "m\u{1}", "zz"] { group.set(id, bytes(id), key: nil) }
    #expect(ids(group) == ["a1", "f", "e\u{301}", "g", "m\u{1}", "m\"q", "m\\q", "zz"].sorted())
    #expect(ids(group).firstIndex(of: "e\u{301}")! > ids(group).firstIndex(of: "f")!)
    for id in ["e\u{301}", "m\"q", "m\u{1}", "g"] { #expect(group.value(of: id) == .some(bytes(id))) }
    group.set("é", nil, key: nil)
    #expect(group.value(of: "e\u{301}") == .some(nil), "\"é\" is the same id to a string")
}

@Test func spellingsAStringCallsEqualAreOneIdInEitherOrder() {
    // U+212A KELVIN SIGN is "K" to a string, as it is to the tree's dictionaries.
    var group = Checkpoint.PendingGroup()
    group.set("K1", bytes("ascii first"), key: nil)
    group.set("\u{212A}1", bytes("kelvin second"), key: nil)
    group.set("\u{212A}0", bytes("kelvin first"), key: nil)
    bytes("ascii second").withUnsafeBytes { value in bytes("K0").withUnsafeBytes { group.write($0, copying: value, key: nil) } }
    #expect(ids(group).count == 2)
    #expect(group.value(of: "K1") == .some(bytes("kelvin second")))
    #expect(group.value(of: "\u{212A}0") == .some(bytes("ascii second")))
}

@Test func aPendingGroupMatchesASortedDictionaryWithIdsOfEveryKind() {
    var state: UInt64 = 7
    func next() -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return state >> 33
    }
    // No second spelling of one string ("e" + U+0301 beside "é", U+212A beside "K"): the
    // standard library's `<` does not order those consistently with its `==` ("0éK" is neither
    // before, after nor equal to "0e\u{301}"; "K0" < "\u{212A}" == "K"), so they have no sorted
    // order to compare with. `spellingsAStringCallsEqualAreOneIdInEitherOrder` covers them.
    let pieces = ["a", "b", "K", "é", "\"", "\\", "\u{1}", "~", "0"]
    var group = Checkpoint.PendingGroup()
    var model: [String: [UInt8]?] = [:]
    for step in 0..<3_000 {
        let id = (0..<(1 + next() % 3)).map { _ in pieces[Int(next() % UInt64(pieces.count))] }.joined()
        let value: [UInt8]? = next() % 8 == 0 ? nil : bytes("v\(step)")
        if let value, next() % 2 == 0 {
            value.withUnsafeBytes { value in bytes(id).withUnsafeBytes { group.write($0, copying: value, key: nil) } }
        } else {
            group.set(id, value, key: nil)
        }
        model[id] = .some(value)
    }
    let sorted = records(of: group)
    #expect(sorted.map { group.name(of: $0.id) } == model.keys.sorted())
    #expect(sorted.allSatisfy { model[group.name(of: $0.id)]! == $0.record.value.map { Array(group.storage[$0]) } })
    #expect(model.keys.allSatisfy { group.value(of: $0) == model[$0] })
}
