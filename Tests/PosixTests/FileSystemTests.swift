import Foundation
import Glibc
@testable import Posix
import Testing

private func temporaryDirectory() -> String {
    let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
    var template = Array((base + "/switchboard-fs-XXXXXX").utf8CString)
    return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
}

private func mode(of path: String) -> mode_t {
    var status = stat()
    stat(path, &status)
    return status.st_mode & 0o777
}

@Test func writeFileSetsTheModeExactlyEvenOverALooserFile() throws {
    let directory = temporaryDirectory()
    defer { _ = try? FileSystem.removeIfExists(directory + "/key.pem"); rmdir(directory) }
    let path = directory + "/key.pem"
    try FileSystem.writeFile([1, 2, 3], to: path, mode: 0o644)
    #expect(mode(of: path) == 0o644)
    try FileSystem.writeFile([4, 5], to: path, mode: 0o600)
    #expect(mode(of: path) == 0o600)
    #expect(FileSystem.readFile(path) == [4, 5])
}

@Test func failureNamesTheCallAndThePath() {
    do {
        try FileSystem.writeFile([1], to: "/proc/switchboard-cannot-exist/key.pem", mode: 0o600)
        Issue.record("writing into /proc succeeded")
    } catch {
        #expect(error.description.hasPrefix("could not open /proc/switchboard-cannot-exist/key.pem: "))
    }
}

@Test func readFileIsNilForAMissingFile() {
    #expect(FileSystem.readFile("/nonexistent/switchboard") == nil)
}

/// Runs `body` with a new empty file open for reading and writing, and its path.
private func withNewFile(_ body: (Int32, String) throws -> Void) throws {
    let directory = temporaryDirectory()
    defer { _ = try? FileSystem.removeIfExists(directory + "/segment"); rmdir(directory) }
    let path = directory + "/segment"
    let fd = try FileSystem.open(path, flags: O_RDWR | O_CREAT)
    defer { FileSystem.close(fd) }
    try body(fd, path)
}

@Test func writeOutKeepsTheBytesAndNamesItsCallWhenItFails() throws {
    try withNewFile { fd, path in
        try FileSystem.write(fd, [1, 2, 3, 4], at: 0, path: path)
        try FileSystem.writeOut(fd, offset: 0, count: 4, path: path)
        #expect(try FileSystem.read(fd, at: 0, count: 4, path: path) == [1, 2, 3, 4])
        // A negative range is refused by the kernel (EINVAL), reported with the call and the path.
        #expect {
            try FileSystem.writeOut(fd, offset: -1, count: 4, path: path)
        } throws: { error in
            (error as? FileError)?.description.contains("sync_file_range") == true
        }
    }
}

@Test func aPartOfAnArrayIsWrittenFromItsOwnStartAtTheOffsetGiven() throws {
    try withNewFile { fd, path in
        let bytes: [UInt8] = [10, 11, 12, 13, 14, 15, 16]
        try FileSystem.write(fd, [0, 0, 0, 0, 0, 0], at: 0, path: path)
        try FileSystem.write(fd, bytes[2..<5], at: 3, path: path)
        try FileSystem.write(fd, bytes[5..<5], at: 6, path: path)
        #expect(try FileSystem.read(fd, at: 0, count: 10, path: path) == [0, 0, 0, 12, 13, 14])
    }
}

@Test func aLockLetGoWithinTheWaitIsTakenAndOneKeptIsNot() throws {
    let directory = temporaryDirectory()
    let path = directory + "/lock"
    defer { _ = try? FileSystem.removeIfExists(path); rmdir(directory) }
    let holder = try FileSystem.open(path, flags: O_RDWR | O_CREAT, mode: 0o600)
    let waiter = try FileSystem.open(path, flags: O_RDWR | O_CREAT, mode: 0o600)
    defer { FileSystem.close(waiter) }
    #expect(try FileSystem.lockExclusively(holder, path: path))
    // Kept for the whole wait: refused.
    #expect(try !FileSystem.lockExclusively(waiter, path: path))
    // Let go a moment after the wait began (as a child process does at its exec): taken.
    let release = Thread { usleep(50_000); FileSystem.close(holder) }
    release.start()
    #expect(try FileSystem.lockExclusively(waiter, path: path))
}

@Test func aMappedFileHoldsTheFilesBytesAndAnEmptyFileMapsToNone() throws {
    let directory = temporaryDirectory()
    let path = directory + "/journal.jsonl"
    let empty = directory + "/empty"
    defer { _ = try? FileSystem.removeIfExists(path); _ = try? FileSystem.removeIfExists(empty); rmdir(directory) }
    let bytes = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
    try FileSystem.writeFile(bytes, to: path, mode: 0o600)
    try FileSystem.writeFile([], to: empty, mode: 0o600)
    for (file, expected) in [(path, bytes), (empty, [])] {
        let fd = try FileSystem.open(file, flags: O_RDONLY)
        let mapped = try FileSystem.map(fd, path: file)
        FileSystem.close(fd)
        #expect(mapped.withBytes { Array($0) } == expected, "the mapping outlives its descriptor")
    }
}

@Test func aFileReadInsteadOfMappedLendsTheSameBytes() {
    // What `FileSystem.map` gives on a file system that cannot map files (`ENODEV`).
    let bytes = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
    #expect(MappedFile(reading: bytes).withBytes { Array($0) } == bytes)
    #expect(MappedFile(reading: []).withBytes { $0.count } == 0)
}
