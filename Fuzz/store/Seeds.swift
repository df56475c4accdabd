#if canImport(Glibc)
import Glibc
#endif
import JSON
import Posix
@testable import Store

// The seeds of this target (Fuzz/store/corpus), written by the real store:
//
//     SWITCHBOARD_FUZZ_STORE_SEEDS=Fuzz/store/corpus .build-fuzz/debug/fuzz-store
//
// Two groups of small messages in segments of `segmentBytes` (three or four records each), a
// late receipt on a sealed message (a moved record), a deletion, messages with a `clientId`
// (keyed index lines); then torn and corrupt variants of that folder.

/// A message as the chat service stores it; `clientId` makes its index line keyed.
private func message(_ group: String, _ id: String, _ text: String, clientId: String? = nil) -> Mutation {
    var value: [String: JSONValue] = ["message": .string(text), "user": "u1", "createdAt": .integer(1_763_000_000_000)]
    if let clientId { value["clientId"] = .string(clientId) }
    return .set(path: ["Messages", group, id], value: .object(value))
}

/// Opens the folder (its start-up checkpoint applies the journal), appends `mutations` and closes.
private func session(_ mutations: [Mutation]) {
    let (store, _) = try! Store.open(
        directory: folder, durability: .none, segmentBytes: segmentBytes, recentMessages: recentMessages,
        idempotencyFields: IdempotencyFields(owner: "user", key: "clientId"), logger: logger)
    if !mutations.isEmpty { store.append(mutations) }
    store.close()
}

/// The folder's files (but the lock) framed as the target reads them.
private func framedFolder() -> [String: [UInt8]] {
    contents().compactMapValues { $0 }
}

private func frame(_ files: [String: [UInt8]]) -> [UInt8] {
    files.sorted { $0.key < $1.key }.flatMap { path, bytes in [0xFF] + Array(path.utf8) + [0x0A] + bytes }
}

private func lines(_ mutations: [Mutation]) -> [UInt8] {
    mutations.flatMap(\.journalLine)
}

/// Writes every seed into `directory`.
func writeSeeds(into directory: String) {
    try! FileSystem.removeTree(folder)
    let first: [Mutation] = [
        .set(path: ["Users", "u1"], value: ["name": "Ann", "groupList": ["g1": true, "g2": true]]),
        .set(path: ["Groups", "g1"], value: ["name": "Lobby", "userList": ["u1": true]]),
        .set(path: ["Groups", "g2"], value: ["name": "Hall", "userList": ["u1": true]]),
    ] + (1...12).map { message("g1", "m\(10 + $0)", "hello \($0)") }
        + (1...4).map { message("g2", "m\(10 + $0)", "hi \($0)", clientId: $0 == 2 ? "c-1" : nil) }
    session(first)
    session([
        .merge(path: ["Messages", "g1", "m12", "receivedBy"], value: ["u1": .integer(1_763_000_000_500)]),
        .delete(path: ["Messages", "g1", "m13"]),
        message("g1", "m30", "keyed", clientId: "c-2"),
    ])
    session([])
    let checkpoint = framedFolder()
    let journal = lines([
        message("g2", "m31", "later", clientId: "c-3"),
        .merge(path: ["Groups", "g2"], value: ["name": "Foyer"]),
        .merge(path: ["Messages", "g1", "m15", "receivedBy"], value: ["u1": .integer(1_763_000_000_800)]),
    ])
    var withJournal = checkpoint
    withJournal["journal.jsonl"] = journal
    let manifest = try! JSONValue.parse(checkpoint["manifest.json"]!, limits: .trustedFile)
    let generation = Int(manifest["journal"]!.int64Value!)
    let segment = "messages/g1/00000001.jsonl"
    let index = "messages/g1/00000001.idx"
    let openSegment = checkpoint.keys.filter { $0.hasPrefix("messages/g1/") && $0.hasSuffix(".jsonl") }.max()!

    func variant(_ base: [String: [UInt8]], _ changes: [String: [UInt8]?]) -> [String: [UInt8]] {
        var files = base
        for (path, bytes) in changes { files[path] = bytes }
        return files
    }
    var garbledIndex = checkpoint[index]!
    garbledIndex[garbledIndex.firstIndex(of: 0x20)!] = UInt8(ascii: "x")
    let legacyTree: JSONValue = [
        "Auth": [:], "Groups": ["g1": ["name": "Lobby"]], "Users": ["u1": ["name": "Ann"]],
        "Messages": ["g1": ["m11": ["message": "hi", "user": "u1"], "m12": ["message": "yo", "user": "u1"]]],
    ]
    let seeds: [String: [String: [UInt8]]] = [
        "checkpoint": checkpoint,
        "checkpoint-and-journal": withJournal,
        "journal-torn": variant(withJournal, ["journal.jsonl": Array(journal.dropLast(17))]),
        "journal-spare-zeros": variant(withJournal, ["journal.jsonl": journal + [UInt8](repeating: 0, count: 64)]),
        "journal-set-aside": variant(checkpoint, [
            "journal.\(generation + 1).jsonl": journal, "journal.jsonl": Array(journal.prefix(40)),
        ]),
        "index-garbled": variant(withJournal, [index: garbledIndex]),
        "segment-cut": variant(withJournal, [segment: Array(checkpoint[segment]!.dropLast(30))]),
        "open-segment-cut": variant(checkpoint, [openSegment: Array(checkpoint[openSegment]!.dropLast(5))]),
        "manifest-torn": variant(checkpoint, ["manifest.json": Array(checkpoint["manifest.json"]!.dropLast(20))]),
        "document-missing": variant(withJournal, ["documents/Users.json": nil]),
        "crashed-checkpoint": variant(withJournal, [
            openSegment: checkpoint[openSegment]! + Array(#"{"id":"m99","value":{"m":1}}"#.utf8) + [0x0A],
            "manifest.json.tmp": Array(checkpoint["manifest.json"]!.prefix(50)),
        ]),
        "first-layout": [
            "tree.json": legacyTree.serialized,
            "journal.jsonl": lines([message("g1", "m13", "new"), .delete(path: ["Messages", "g1", "m11"])]),
        ],
    ]
    try! FileSystem.removeTree(directory)
    try! FileSystem.makeDirectories(directory)
    for (name, files) in seeds {
        let path = directory + "/" + name
        let fd = try! FileSystem.open(path, flags: O_WRONLY | O_CREAT | O_TRUNC, mode: 0o644)
        try! FileSystem.writeAll(fd, frame(files), path: path)
        FileSystem.close(fd)
    }
    try! FileSystem.removeTree(folder)
}
