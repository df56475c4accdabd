import Dispatch
import Foundation
import Logging
import Testing
@testable import Store

/// Runs `start` and waits for the completion it is handed to be called.
private func waitFor<T: Sendable>(_ start: (@escaping @Sendable (T) -> Void) -> Void) -> T {
    let done = DispatchSemaphore(value: 0)
    let box = Box<T>()
    start { value in
        box.value = value
        done.signal()
    }
    done.wait()
    return box.value!
}

/// The names in the media folder, sorted.
private func names(_ folder: TemporaryFolder) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: folder.path + "/media")) ?? []).sorted()
}

/// A value handed from a worker thread to the test after a semaphore, so never touched at once.
private final class Box<T>: @unchecked Sendable {
    var value: T?
}

@Test func aWrittenFileIsReadBackUnderItsIdWithNothingLeftBehind() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let files = try MediaFiles(directory: folder.path + "/media", durability: .fsync, logger: Logger(label: "test"))
    let bytes = (0..<100_000).map { UInt8(truncatingIfNeeded: $0) }
    let error: StoreError? = waitFor { files.write("abc", bytes, completion: $0) }
    #expect(error == nil)
    #expect(waitFor { files.read("abc", completion: $0) } == bytes)
    #expect(names(folder) == ["abc"])
    #expect(waitFor { files.read("missing", completion: $0) } == nil)
}

@Test func removeDeletesTheFile() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let files = try MediaFiles(directory: folder.path + "/media", durability: .none, logger: Logger(label: "test"))
    let error: StoreError? = waitFor { files.write("abc", [1, 2, 3], completion: $0) }
    #expect(error == nil)
    files.remove("abc")
    files.drain()
    #expect(waitFor { files.read("abc", completion: $0) } == nil)
}

@Test func aFailedWriteReportsTheErrorAndLeavesNoTemporaryFile() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let files = try MediaFiles(directory: folder.path + "/media", durability: .fsync, logger: Logger(label: "test"))
    let error: StoreError? = waitFor { files.write("no/such/folder", [1], completion: $0) }
    #expect(error != nil)
    #expect(names(folder).isEmpty)
}

@Test func startUpRemovesTemporaryFilesAndFilesWithoutARecord() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let files = try MediaFiles(directory: folder.path + "/media", durability: .none, logger: Logger(label: "test"))
    for name in ["kept", "orphan", "kept.tmp"] {
        _ = FileManager.default.createFile(atPath: folder.path + "/media/" + name, contents: Data([1]))
    }
    #expect(files.removeFiles(keeping: ["kept"]) == 2)
    #expect(names(folder) == ["kept"])
}
