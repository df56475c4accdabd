import Dispatch
import Foundation
import JSON
import Logging
@testable import Store

/// A fresh temporary folder; each test removes it with `defer { folder.remove() }`.
struct TemporaryFolder {
    let path: String

    init() {
        var template = Array((NSTemporaryDirectory() + "/store-test-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed")
        path = String(cString: template.withUnsafeBufferPointer { $0.baseAddress! })
    }

    /// The data folder inside, not yet created, so tests also cover folder creation.
    var data: String { path + "/data" }

    func file(_ name: String) -> String { data + "/" + name }

    func read(_ name: String) -> [UInt8]? {
        FileManager.default.contents(atPath: file(name)).map { [UInt8]($0) }
    }

    func write(_ name: String, _ bytes: [UInt8]) {
        try? FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: file(name), contents: Data(bytes))
    }

    func write(_ name: String, _ text: String) {
        write(name, Array(text.utf8))
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Thread-safe collection of values reported by store callbacks.
final class Recorder<Value: Sendable>: @unchecked Sendable {
    // @unchecked: every access goes through `lock`.
    private let lock = NSLock()
    private var storage: [Value] = []

    func add(_ value: Value) {
        lock.lock()
        storage.append(value)
        lock.unlock()
    }

    var values: [Value] {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }
}

/// A log handler that keeps messages so tests can check what the store said.
struct RecordingLogHandler: LogHandler {
    let messages: Recorder<(Logger.Level, String)>
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        messages.add((event.level, event.message.description))
    }
}

/// A logger whose messages land in the returned recorder.
func recordingLogger() -> (Logger, Recorder<(Logger.Level, String)>) {
    let messages = Recorder<(Logger.Level, String)>()
    let logger = Logger(label: "store-test") { _ in RecordingLogHandler(messages: messages) }
    return (logger, messages)
}

/// Opens a store in `folder.data` with a quiet logger.
func openStore(
    _ folder: TemporaryFolder, durability: Durability = .fsync, compactAfterBytes: Int = 1 << 20,
    segmentBytes: Int = 1 << 20, recentMessages: Int = 1000, idempotencyFields: IdempotencyFields? = nil,
    retention: MessageRetention = MessageRetention()
) throws -> (Store, JSONValue) {
    let (logger, _) = recordingLogger()
    let opened = try Store.open(
        directory: folder.data, durability: durability, compactAfterBytes: compactAfterBytes, segmentBytes: segmentBytes,
        recentMessages: recentMessages, idempotencyFields: idempotencyFields, retention: retention, logger: logger)
    return (opened.store, opened.tree)
}

/// The whole tree a store holds: its documents plus every stored message of every group.
func fullTree(_ store: Store, _ tree: JSONValue) throws -> JSONValue {
    var root = tree.objectValue ?? [:]
    var messages: [String: JSONValue] = [:]
    for gid in (tree["Messages"]?.objectValue ?? [:]).keys {
        var group: [String: JSONValue] = [:]
        for (id, value) in try store.storedMessages(of: gid) { group[id] = value }
        messages[gid] = .object(group)
    }
    root["Messages"] = .object(messages)
    return .object(root)
}

/// Waits for the next checkpoint the store reports.
final class CheckpointWaiter: @unchecked Sendable {
    // @unchecked: the semaphore and recorder are thread-safe.
    let reports = Recorder<CheckpointReport>()
    private let semaphore = DispatchSemaphore(value: 0)

    init(_ store: Store) {
        store.onCheckpoint = { [reports, semaphore] report in
            reports.add(report)
            semaphore.signal()
        }
    }

    func wait() {
        semaphore.wait()
    }

    /// Waits for a checkpoint that only the store itself starts; false if none came within
    /// `seconds` (a bound for a failing run, not a measurement).
    func wait(seconds: Int) -> Bool {
        semaphore.wait(timeout: .now() + .seconds(seconds)) == .success
    }
}

/// A message mutation as the chat service would write it.
func messageMutation(group: String, id: String, text: String, at time: Int64) -> Mutation {
    .set(path: ["Messages", group, id], value: [
        "message": .string(text), "user": "u1", "createdAt": .integer(time), "imageUrl": nil,
    ])
}
