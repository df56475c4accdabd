#if canImport(Glibc)
import Glibc
#endif
import FuzzSupport
import JSON
import Logging
import Posix
@testable import Store

// The store's loader (Sources/Store/Store+Loading.swift) and the journal line format
// (Sources/Store/Mutation+Journal.swift) on arbitrary files: a data folder is written with the
// input and opened.
//
// Input: the snapshot `tree.json`, a NUL byte, then `journal.jsonl`. Without a NUL there is no
// snapshot and the whole input is the journal.
//
// Invariants: a folder that does not load fails with `.corrupt` and is left exactly as it was;
// one that loads gives an object, and the journal left on disk is the original cut after its
// last good line; a mutation read from a line, written again, reads back the same; and the
// loaded tree saved as the snapshot, with the same journal replayed over it (the state a crash
// during compaction leaves), loads to the same tree.

/// A folder in memory when /dev/shm exists, so that the store's fsyncs cost nothing.
let folder: String = {
    let base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
    var template = Array("\(base)/switchboard-fuzz-store-XXXXXX".utf8CString)
    let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    precondition(made != nil, "mkdtemp failed with errno \(errno)")
    return String(cString: made!)
}()
let snapshotPath = folder + "/tree.json"
let journalPath = folder + "/journal.jsonl"
let logger = Logger(label: "fuzz", factory: { _ in SwiftLogNoOpLogHandler() })

/// Removes the folder when libFuzzer exits normally; a crash leaves it for inspection.
func removeFolder() {
    for name in ["tree.json", "tree.json.tmp", "journal.jsonl", "lock"] {
        unlink(folder + "/" + name)
    }
    rmdir(folder)
}
atexit { removeFolder() }

/// Replaces `path` with `bytes`, or removes it when `bytes` is nil.
func write(_ bytes: [UInt8]?, to path: String) {
    unlink(path)
    guard let bytes else { return }
    let fd = try! FileSystem.open(path, flags: O_WRONLY | O_CREAT | O_TRUNC)
    try! FileSystem.writeAll(fd, bytes, path: path)
    FileSystem.close(fd)
}

/// The file's bytes, or nil when it does not exist.
func read(_ path: String) -> [UInt8]? {
    guard let fd = try! FileSystem.openIfExists(path, flags: O_RDONLY) else { return nil }
    defer { FileSystem.close(fd) }
    return try! FileSystem.readAll(fd, path: path)
}

func open() -> Result<JSONValue, StoreError> {
    Result { () throws(StoreError) in
        let (store, tree) = try Store.open(directory: folder, durability: .none, logger: logger)
        store.close()
        return tree
    }
}

/// Checks that every journal line that reads as a mutation is written back the same way.
func checkLineRoundTrip(_ journal: ArraySlice<UInt8>) {
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

Fuzzer.run { data in
    let input = Array(data)
    let separator = input.firstIndex(of: 0)
    let snapshot = separator.map { Array(input[..<$0]) }
    let journal = separator.map { Array(input[($0 + 1)...]) } ?? input
    write(snapshot, to: snapshotPath)
    write(journal, to: journalPath)
    checkLineRoundTrip(journal[...])

    let tree: JSONValue
    switch open() {
    case .failure(let error):
        guard case .corrupt = error else { preconditionFailure("opening failed with \(error)") }
        precondition(read(snapshotPath) == snapshot, "a failed open changed the snapshot")
        precondition(read(journalPath) == journal, "a failed open changed the journal")
        return
    case .success(let loaded):
        tree = loaded
    }
    guard case .object = tree else { preconditionFailure("the loaded tree is not an object: \(tree)") }
    let kept = read(journalPath) ?? []
    precondition(journal.starts(with: kept), "the journal on disk is not a prefix of the original")
    precondition(kept.isEmpty || kept.last == 0x0A, "the journal on disk does not end with a newline")

    write(tree.serialized, to: snapshotPath)
    switch open() {
    case .failure(let error):
        preconditionFailure("the loaded tree saved as the snapshot does not load: \(error)")
    case .success(let reloaded):
        precondition(reloaded == tree, "replaying the journal over its own result changed the tree")
    }
    precondition(read(journalPath) == kept, "a second open changed the journal")
}
