#if canImport(Glibc)
import Glibc
#endif
import FuzzSupport
import JSON
import Logging
import Posix
@testable import Store

// The store's loader (Sources/Store/Store+Loading.swift, Store+Migration.swift), the manifest,
// the segment and index formats (Manifest.swift, SegmentFormat.swift) and paging over segments
// (MessageFiles.swift) on arbitrary files: a data folder is written from the input and opened.
//
// Input: a list of files. Each starts with the byte 0xFF (never part of UTF-8 text), then its
// path relative to the data folder, a newline, and its bytes up to the next 0xFF or the end:
//
//     \xFFmanifest.json\n{"format":2,...}\n\xFFdocuments/Users.json\n{...}\n
//     \xFFmessages/g1/00000001.jsonl\n{"id":...}\n\xFFmessages/g1/00000001.idx\n0 52 "..."\n
//     \xFFjournal.jsonl\n{"op":"set",...}\n
//
// A path has at most three parts of letters, digits, `.`, `_`, `-` and `%` (not `.` or `..`);
// a file with another path, or one that cannot be written where the folders above it are files,
// is left out, and a later file with the same path replaces an earlier one. Bytes before the
// first 0xFF are ignored. Anything the loader reads can be written: `manifest.json`,
// `documents/<Key>.json`, a group's segments and indexes, `journal.jsonl`, set-aside journals
// `journal.<n>.jsonl`, `journal.spare`, and a first-layout `tree.json` (migrated when there is
// no manifest). The seeds are folders the real store wrote, framed so (Seeds.swift).
//
// Invariants:
// - A folder that does not load fails with `.corrupt` or `.corruptSegment` and is left exactly
//   as it was (every file but the lock; without a manifest, the first-layout files, since a
//   migration starts by clearing what a crashed one left). A folder where a file stands in for
//   a folder the store needs (or the other way round) may also fail with that system call's
//   error (`ENOTDIR`, `EISDIR`).
// - One that loads gives an object, and its history reads page by page: each page answers or
//   fails with `.corrupt` or `.corruptSegment`, ascending, within its bounds.
// - Opened again (after the start-up checkpoint applied the journals) it gives the same tree.
// - The same files with each journal cut after its last good line give the same tree: a torn
//   tail contributes nothing.
// - A mutation read from a journal line, written again, reads back the same.

/// A folder in memory when /dev/shm exists, so that the store's fsyncs cost nothing.
let base: String = {
    let parent = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
    var template = Array("\(parent)/switchboard-fuzz-store-XXXXXX".utf8CString)
    let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    precondition(made != nil, "mkdtemp failed with errno \(errno)")
    return String(cString: made!)
}()
let folder = base + "/data"
let logger = Logger(label: "fuzz", factory: { _ in SwiftLogNoOpLogHandler() })
/// Small enough that the seeds' groups span several segments and the tree leaves some on disk.
let recentMessages = 4
let segmentBytes = 256

/// Removes the folder when libFuzzer exits normally; a crash leaves it for inspection.
atexit { try? FileSystem.removeTree(base) }

/// The files of an input, by path, in the order written. (`memchr` finds the markers: a
/// generic search is slow in a debug build with coverage counters on every byte.)
func files(of input: UnsafeRawBufferPointer) -> [(path: String, bytes: [UInt8])] {
    guard let base = input.baseAddress else { return [] }
    func find(_ byte: UInt8, from start: Int, to end: Int) -> Int {
        guard start < end, let found = memchr(base + start, Int32(byte), end - start) else { return end }
        return base.distance(to: UnsafeRawPointer(found))
    }
    var result: [(path: String, bytes: [UInt8])] = []
    var start = find(0xFF, from: 0, to: input.count)
    while start < input.count {
        let end = find(0xFF, from: start + 1, to: input.count)
        let newline = find(0x0A, from: start + 1, to: end)
        defer { start = end }
        guard newline < end else { continue }
        let path = String(decoding: UnsafeRawBufferPointer(rebasing: input[(start + 1)..<newline]), as: UTF8.self)
        guard isAllowed(path) else { continue }
        result.removeAll { $0.path == path }
        result.append((path, Array(UnsafeRawBufferPointer(rebasing: input[(newline + 1)..<end]))))
    }
    return result
}

func isAllowed(_ path: String) -> Bool {
    let parts = path.split(separator: "/", omittingEmptySubsequences: false)
    guard (1...3).contains(parts.count), path != "lock" else { return false }
    return parts.allSatisfy { part in
        !part.isEmpty && part != "." && part != ".."
            && part.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"),
                    UInt8(ascii: "%"):
                    return true
                default:
                    return false
                }
            }
    }
}

/// Replaces the folder with `files`; those that cannot be written are left out.
func write(_ files: [(path: String, bytes: [UInt8])]) {
    try! FileSystem.removeTree(folder)
    try! FileSystem.makeDirectories(folder)
    for (path, bytes) in files {
        let full = folder + "/" + path
        if let slash = full.lastIndex(of: "/"), (try? FileSystem.makeDirectories(String(full[..<slash]))) == nil { continue }
        guard let fd = try? FileSystem.open(full, flags: O_WRONLY | O_CREAT | O_TRUNC) else { continue }
        try! FileSystem.writeAll(fd, bytes, path: full)
        FileSystem.close(fd)
    }
}

/// Every file below the folder (but the lock) with its bytes, and every folder (as a nil).
func contents(_ path: String = folder, prefix: String = "") -> [String: [UInt8]?] {
    var result: [String: [UInt8]?] = [:]
    for name in try! FileSystem.list(path) where !(prefix.isEmpty && name == "lock") {
        let full = path + "/" + name
        var status = stat()
        precondition(lstat(full, &status) == 0, "stat \(full) failed")
        if status.st_mode & S_IFMT == S_IFDIR {
            result[prefix + name] = .some(nil)
            result.merge(contents(full, prefix: prefix + name + "/")) { $1 }
        } else {
            result[prefix + name] = .some(FileSystem.readFile(full))
        }
    }
    return result
}

/// Opens the folder; on success reads its history when asked, and closes the store.
func open(readingHistory: Bool = false) -> Result<JSONValue, StoreError> {
    Result { () throws(StoreError) in
        let (store, tree) = try Store.open(
            directory: folder, durability: .none, segmentBytes: segmentBytes, recentMessages: recentMessages,
            idempotencyFields: IdempotencyFields(owner: "user", key: "clientId"), logger: logger)
        defer { store.close() }
        if readingHistory { readHistory(store) }
        return tree
    }
}

/// Reads each group's stored history: the newest page and the one before it, the oldest page,
/// and one message by id.
func readHistory(_ store: Store) {
    for gid in store.storedMessageCounts.keys.sorted() {
        if let newest = readPage(store, .older(group: gid, before: nil, limit: 3)), newest.more,
            let first = newest.records.first?.id, let older = readPage(store, .older(group: gid, before: first, limit: 3))
        {
            precondition(older.records.allSatisfy { $0.id < first }, "an older page went past its bound")
        }
        if let oldest = readPage(store, .newer(group: gid, after: nil, before: nil, limit: 3)), let first = oldest.records.first {
            let one = readPage(store, .one(group: gid, id: first.id))
            precondition(one == nil || one!.records.map(\.id) == [first.id], "a message read by id differs from its page")
        }
    }
}

/// One read: its page, or nil after a defined failure.
func readPage(_ store: Store, _ query: MessageQuery) -> MessagePage? {
    switch Result(catching: { () throws(StoreError) in try store.read(query) }) {
    case .success(let page):
        let ids = page.records.map(\.id)
        precondition(zip(ids, ids.dropFirst()).allSatisfy { $0 < $1 }, "a page is not ascending: \(ids)")
        if case .one = query { precondition(ids.count <= 1, "one message read as \(ids.count)") }
        if case .older(_, _, let limit) = query { precondition(ids.count <= limit, "a page beyond its limit") }
        if case .newer(_, _, _, let limit) = query { precondition(ids.count <= limit, "a page beyond its limit") }
        return page
    case .failure(.corrupt), .failure(.corruptSegment):
        return nil
    case .failure(let error):
        preconditionFailure("reading \(query) failed with \(error)")
    }
}

/// Checks that every journal line that reads as a mutation is written back the same way.
func checkLineRoundTrip(_ journal: [UInt8]) {
    for line in journal.split(separator: 0x0A) {
        guard let value = try? JSONValue.parse(Array(line), limits: .trustedFile),
            let mutation = try? Mutation(journalLine: value)
        else { continue }
        let written = mutation.journalLine
        precondition(written.last == 0x0A && !written.dropLast().contains(0x0A), "a journal line with an inner newline")
        let reread = try? Mutation(journalLine: JSONValue.parse(Array(written.dropLast()), limits: .trustedFile))
        precondition(reread == mutation, "the journal line \(String(decoding: written, as: UTF8.self)) reads back differently")
    }
}

func isJournal(_ path: String) -> Bool {
    path == "journal.jsonl" || StoreLayout.rotatedGeneration(path) != nil
}

/// The files with each journal cut after its last good line (and its spare zeros).
func cutJournals(_ files: [(path: String, bytes: [UInt8])]) -> [(path: String, bytes: [UInt8])] {
    files.map { file in
        guard isJournal(file.path) else { return file }
        let full = folder + "/" + file.path
        write([file])
        let replay = try? Store.replayJournal(path: full) { _ in }
        return (file.path, Array(file.bytes.prefix(replay?.goodLength ?? file.bytes.count)))
    }
}

if let seeds = getenv("SWITCHBOARD_FUZZ_STORE_SEEDS") {
    writeSeeds(into: String(cString: seeds))
    exit(0)
}

Fuzzer.run { data in
    let input = files(of: data)
    for file in input where isJournal(file.path) { checkLineRoundTrip(file.bytes) }
    write(input)
    let before = contents()

    let tree: JSONValue
    switch open(readingHistory: true) {
    case .failure(let error):
        switch error {
        case .corrupt, .corruptSegment: break
        case .io(_, _, ENOTDIR), .io(_, _, EISDIR):
            // A file where the store makes a folder, or the other way round (the framing can
            // write both): a failed call with the path, not a parse, and it may fail after the
            // start-up checkpoint began.
            return
        default: preconditionFailure("opening failed with \(error)")
        }
        let after = contents()
        if before["manifest.json"] != nil {
            precondition(after == before, "a failed open (\(error)) changed the folder")
        } else {
            for name in ["tree.json", "journal.jsonl"] {
                precondition(after[name] == before[name], "a failed migration changed \(name)")
            }
        }
        return
    case .success(let loaded):
        tree = loaded
    }
    guard case .object(let members) = tree, case .object? = members["Messages"] else {
        preconditionFailure("the loaded tree is not an object with Messages: \(tree)")
    }

    switch open() {
    case .failure(let error):
        preconditionFailure("the folder does not open again after its start-up checkpoint: \(error)")
    case .success(let reloaded):
        precondition(reloaded == tree, "opening again after the start-up checkpoint changed the tree")
    }

    let cut = cutJournals(input)
    guard zip(cut, input).contains(where: { $0.bytes != $1.bytes }) else { return }
    write(cut)
    switch open() {
    case .failure(let error):
        preconditionFailure("the journals cut after their last good lines do not load: \(error)")
    case .success(let reloaded):
        precondition(reloaded == tree, "a torn journal tail changed the tree")
    }
}
