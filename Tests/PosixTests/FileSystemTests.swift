import Glibc
import Posix
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
