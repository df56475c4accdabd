import Glibc
import Testing

@testable import Posix

/// A fresh folder under /tmp, removed by `removeTree` at the end of the test.
private func temporaryFolder() -> String {
    var template = Array("/tmp/posix-test-XXXXXX".utf8CString)
    let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    precondition(made != nil, "mkdtemp failed")
    return String(cString: made!)
}

private func write(_ path: String, _ text: String) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    _ = text.withCString { Glibc.write(fd, $0, strlen($0)) }
    close(fd)
}

private func removeTree(_ path: String) {
    _ = system("rm -rf '\(path)'")
}

@Test func filesListsRegularFilesBelowTheRootAndLeavesOutLinksThatLeaveIt() {
    let outside = temporaryFolder()
    let root = temporaryFolder()
    defer { removeTree(outside); removeTree(root) }
    write(outside + "/secret.txt", "secret")
    mkdir(root + "/css", 0o755)
    write(root + "/index.html", "<p>hi</p>")
    write(root + "/css/app.css", "p{}")
    symlink(outside + "/secret.txt", root + "/leak.txt")
    symlink(outside, root + "/escape")
    symlink(root + "/index.html", root + "/home.html")
    let found = FileSystem.files(under: root)
    #expect(found?.files == ["css/app.css", "home.html", "index.html"])
    #expect(found?.outside == ["escape", "leak.txt"])
}

@Test func filesOfAMissingFolderIsNil() {
    #expect(FileSystem.files(under: "/nonexistent/public") == nil)
}

@Test func aLoopOfLinksEndsAtTheDepthLimit() {
    let root = temporaryFolder()
    defer { removeTree(root) }
    mkdir(root + "/a", 0o755)
    symlink(root + "/a", root + "/a/again")
    write(root + "/a/file.txt", "x")
    let files = FileSystem.files(under: root, depth: 3)?.files ?? []
    #expect(files == ["a/again/again/file.txt", "a/again/file.txt", "a/file.txt"])
}
