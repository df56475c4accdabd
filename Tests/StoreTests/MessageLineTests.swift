import Foundation
import Testing
import JSON
@testable import Store

private func parsed(_ line: [UInt8]) -> (group: String, id: String, value: [UInt8])? {
    line.withUnsafeBytes { raw in
        MessageLine.parse(raw).map {
            (String(decoding: raw[$0.group], as: UTF8.self), String(decoding: raw[$0.id], as: UTF8.self), Array(raw[$0.value]))
        }
    }
}

/// A line as the store writes it, without its newline.
private func line(_ mutation: Mutation) -> [UInt8] {
    Array(mutation.journalLine.dropLast())
}

@Test func aWholeMessageLineGivesItsGroupIdAndTheRecordsBytes() throws {
    let value: JSONValue = ["message": "say \"hi\"\n", "user": "u1", "createdAt": 7, "clientId": "c1", "receivedBy": ["u2": 9]]
    let found = try #require(parsed(line(.set(path: ["Messages", "g-1", "-M00000001"], value: value))))
    #expect(found.group == "g-1")
    #expect(found.id == "-M00000001")
    #expect(found.value == value.serialized)
}

@Test func everyOtherLineIsLeftToTheParser() {
    let message: JSONValue = ["message": "x", "user": "u1"]
    let others: [[UInt8]] = [
        line(.set(path: ["Messages", "g\"1", "m1"], value: message)),
        line(.set(path: ["Messages", "g1", "m\u{1}"], value: message)),
        line(.set(path: ["Messages", "g1", "m1", "receivedBy", "u2"], value: 5)),
        line(.set(path: ["Messages", "g1"], value: ["m1": message])),
        line(.set(path: ["Users", "u1"], value: ["name": "Ada"])),
        line(.set(path: ["Messages", "g1", "m1"], value: nil)),
        line(.set(path: ["Messages", "g1", "m1"], value: "text")),
        line(.merge(path: ["Messages", "g1", "m1"], value: ["message": "y"])),
        line(.delete(path: ["Messages", "g1", "m1"])),
        Array(#"{"path":["Messages","g1","m1"],"op":"set","value":{"user":"u1"}}"#.utf8),
        Array(#"{"op":"set","path":["Messages","","m1"],"value":{"user":"u1"}}"#.utf8),
        Array(#"{"op":"set","path":["Messages","g1","m1"],"value":{"user":"u1"}"#.utf8),
        Array(#"{"op":"set","path":["Messages","g1","m1"]}"#.utf8),
        Array(#"{"op":"set","path":["Messages","g1"#.utf8),
    ]
    for other in others {
        #expect(parsed(other) == nil, "\(String(decoding: other, as: UTF8.self))")
    }
}

@Test func idsWithAnEscapeOrAControlByteAnywhereAreLeftToTheParser() throws {
    // Every position of ids up to 20 bytes (the plain scan goes a word at a time), in the
    // group and in the message id.
    let message: JSONValue = ["message": "x", "user": "u1"]
    for length in 1...20 {
        let plain = String(repeating: "a", count: length)
        let found = try #require(parsed(line(.set(path: ["Messages", plain, plain + "m"], value: message))))
        #expect(found.group == plain && found.id == plain + "m")
        for position in 0..<length {
            for special in ["\"", "\\", "\u{1}", "\u{1F}", "\n"] {
                var characters = Array(plain)
                characters[position] = Character(special)
                let odd = String(characters)
                #expect(parsed(line(.set(path: ["Messages", odd, "m1"], value: message))) == nil, "group \(odd.debugDescription)")
                #expect(parsed(line(.set(path: ["Messages", "g1", odd], value: message))) == nil, "id \(odd.debugDescription)")
            }
        }
    }
}

@Test func aRecordsIndexLineNamesItsIdAsTheRecordDoes() throws {
    var segment = Array("earlier line\n".utf8)
    var index: [UInt8] = []
    let ids = ["-P7Sss2Y2SedLHU_EQ3y", "m\"1", "m\\2", "m\u{1}3", "é\n", ""]
    var offsets: [Int] = []
    for (number, id) in ids.enumerated() {
        let value = Array(#"{"n":\#(number)}"#.utf8)
        let offset = segment.count
        offsets.append(offset)
        let (length, quotedID) = value.withUnsafeBytes { SegmentFormat.appendRecord(id: id, value: $0, to: &segment) }
        #expect(try JSONValue.parse(Array(segment[quotedID])) == .string(id))
        let key = number % 2 == 0 ? IdempotencyKey(owner: "u\"1", key: "c\(number)") : nil
        SegmentFormat.appendIndexLine(offset: offset, length: length, quotedID: segment[quotedID], key: key, to: &index)
    }
    let entries = try SegmentFormat.parseIndex(index)
    #expect(entries.map(\.id) == ids)
    #expect(entries.map(\.offset) == offsets)
    #expect(entries.map(\.key) == ids.indices.map { $0 % 2 == 0 ? IdempotencyKey(owner: "u\"1", key: "c\($0)") : nil })
    for (number, entry) in entries.enumerated() {
        let record = try segment[entry.offset..<entry.offset + entry.length].withUnsafeBytes(SegmentFormat.parseRecord)
        #expect(record.id == ids[number] && !record.moved)
        #expect(record.value == ["n": .integer(Int64(number))])
        #expect(segment[entry.offset + entry.length] == 0x0A)
    }
}

@Test func aPlainIdGivenAsBytesIsWrittenAsTheStringIs() {
    for id in ["-P7Sss2Y2SedLHU_EQ3y", "m1", "a b~", ""] {
        let value = Array(#"{"n":1}"#.utf8)
        var fromString: [UInt8] = []
        var fromBytes: [UInt8] = []
        let written = value.withUnsafeBytes { SegmentFormat.appendRecord(id: id, value: $0, to: &fromString) }
        let plain = value.withUnsafeBytes { value in
            Array(id.utf8).withUnsafeBytes { SegmentFormat.appendRecord(plainID: $0, value: value, to: &fromBytes) }
        }
        #expect(fromBytes == fromString)
        #expect(plain == written)
    }
}

@Test func aCheckpointsReplayHandsWholeMessagesOnAsBytesAndTheRestAsMutations() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let mutations: [Mutation] = [
        .set(path: ["Users", "u1"], value: ["name": "Ada"]),
        .set(path: ["Messages", "g1", "m1"], value: ["message": "é \\ \"q\"", "user": "u1", "clientId": "c1"]),
        .set(path: ["Messages", "g1", "m1", "receivedBy", "u2"], value: 5),
        .set(path: ["Messages", "g2", "m2"], value: ["imageUrl": "https://x/y.png", "user": "u2"]),
        .delete(path: ["Messages", "g1", "m1"]),
    ]
    let path = folder.file("journal.jsonl")
    folder.write("journal.jsonl", mutations.flatMap(\.journalLine))
    var events: [String] = []
    let replay = try Store.replayJournal(path: path, wholeMessage: { group, id, value in
        events.append("message \(group) \(String(decoding: id, as: UTF8.self)) \(String(decoding: value, as: UTF8.self))")
    }) { mutation in
        events.append("mutation \(String(decoding: mutation.journalLine.dropLast(), as: UTF8.self))")
    }
    #expect(replay.lines == mutations.count)
    #expect(events == [
        "mutation " + String(decoding: line(mutations[0]), as: UTF8.self),
        "message g1 m1 " + String(decoding: (try #require(mutations[1].value)).serialized, as: UTF8.self),
        "mutation " + String(decoding: line(mutations[2]), as: UTF8.self),
        "message g2 m2 " + String(decoding: (try #require(mutations[3].value)).serialized, as: UTF8.self),
        "mutation " + String(decoding: line(mutations[4]), as: UTF8.self),
    ])
}

@Test func aCheckpointOfWholeMessagesKeepsTheirRecordsAndKeys() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let fields = IdempotencyFields(owner: "user", key: "clientId")
    let (store, _) = try openStore(folder, idempotencyFields: fields)
    for number in 0..<50 {
        store.append([.set(path: ["Messages", "g", "m\(100 + number)"],
                           value: ["message": .string("n \(number) \"q\""), "user": "u1", "clientId": .string("c\(number)")])])
    }
    store.append([.set(path: ["Messages", "g", "m100", "receivedBy", "u2"], value: 3)])
    let waiter = CheckpointWaiter(store)
    store.compact()
    waiter.wait()
    let found = try store.read(.sentBy(IdempotencyKey(owner: "u1", key: "c7")))
    #expect(found.records.map(\.id) == ["m107"])
    #expect(found.records.first?.value["message"] == "n 7 \"q\"")
    let first = try store.read(.one(group: "g", id: "m100"))
    #expect(first.records.first?.value["receivedBy"]?["u2"] == 3)
    store.close()
}

@Test func aCheckpointFindsAKeyWhereverItsMemberStandsAndOnlyInAMember() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let (store, _) = try openStore(folder, idempotencyFields: IdempotencyFields(owner: "user", key: "clientId"))
    let values: [JSONValue] = [
        // The key's name as a whole string value, not as a member: no key.
        ["message": "clientId", "user": "u1"],
        // As text inside a string (escaped quotes): no key.
        ["message": "say \"clientId\":\"k0\"", "user": "u1"],
        // The key's member first, and among others.
        ["clientId": "k2", "message": "x", "user": "u1"],
        ["aa": "clientId", "user": "u1", "zz": 1, "clientId": "k3"],
        // A key that is not a string: no key.
        ["clientId": 4, "message": "x", "user": "u1"],
    ]
    for (number, value) in values.enumerated() {
        store.append([.set(path: ["Messages", "g", "m\(number)"], value: value)])
    }
    let waiter = CheckpointWaiter(store)
    store.compact()
    waiter.wait()
    #expect(try store.read(.sentBy(IdempotencyKey(owner: "u1", key: "clientId"))).records.isEmpty)
    #expect(try store.read(.sentBy(IdempotencyKey(owner: "u1", key: "k0"))).records.isEmpty)
    #expect(try store.read(.sentBy(IdempotencyKey(owner: "u1", key: "k2"))).records.map(\.id) == ["m2"])
    #expect(try store.read(.sentBy(IdempotencyKey(owner: "u1", key: "k3"))).records.map(\.id) == ["m3"])
    #expect(try store.read(.sentBy(IdempotencyKey(owner: "u1", key: "4"))).records.isEmpty)
    #expect(try store.read(.one(group: "g", id: "m1")).records.first?.value["message"] == "say \"clientId\":\"k0\"")
    store.close()
}

private extension Mutation {
    var value: JSONValue? {
        if case .set(_, let value) = self { return value }
        return nil
    }
}
