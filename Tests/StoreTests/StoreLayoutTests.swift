import Testing
import JSON
@testable import Store

@Test func keysOfPlainBytesNameTheirFilesAsThemselves() {
    #expect(StoreLayout.fileName("Users") == "Users")
    #expect(StoreLayout.fileName("-Nx_9") == "-Nx_9")
    #expect(StoreLayout.fileName("../a b") == "%2E%2E%2Fa%20b")
    #expect(StoreLayout.fileName("") == "%")
}

@Test func keysTooLongForAFileNameEndInTheirDigest() {
    let first = String(repeating: "k", count: 300) + "1"
    let second = String(repeating: "k", count: 300) + "2"
    let names = [first, second].map(StoreLayout.fileName)
    #expect(names[0] != names[1])
    for name in names {
        #expect(name.utf8.count == StoreLayout.longestName)
        #expect(name.hasPrefix(String(repeating: "k", count: StoreLayout.longestName - 65) + "~"))
    }
    // Escaped bytes count toward the limit: 67 slashes are 201 bytes written as %2F.
    #expect(StoreLayout.fileName(String(repeating: "/", count: 66)).utf8.count == 198)
    #expect(StoreLayout.fileName(String(repeating: "/", count: 67)).contains("~"))
}

/// Found by the `store` fuzz target: a top-level key or group id longer than a file name once
/// made the start-up checkpoint fail with ENAMETOOLONG.
@Test func documentsAndGroupsWithKeysLongerThanAFileNameAreCheckpointedAndReopened() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let longKey = String(repeating: "D", count: 400)
    let longGroup = String(repeating: "g/", count: 200)
    do {
        let (store, _) = try openStore(folder)
        store.append([.set(path: [longKey], value: ["kept": true])])
        store.append([messageMutation(group: longGroup, id: "m1", text: "first", at: 1)])
        store.append([.set(path: ["Groups", longGroup], value: ["name": "Long"])])
        store.close()
    }
    var expected = DocumentTree.empty
    DocumentTree.apply([
        .set(path: [longKey], value: ["kept": true]),
        messageMutation(group: longGroup, id: "m1", text: "first", at: 1),
        .set(path: ["Groups", longGroup], value: ["name": "Long"]),
    ], to: &expected)
    for _ in 0..<2 {
        let (store, tree) = try openStore(folder)
        defer { store.close() }
        #expect(try fullTree(store, tree) == expected)
        #expect(folder.read("journal.jsonl") == [], "the start-up checkpoint took the journal")
    }
}
