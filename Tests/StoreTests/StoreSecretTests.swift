import Foundation
import Testing
@testable import Store

@Test func createsSecretWithOwnerOnlyMode() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let (store, _) = try openStore(folder)
    let secret = try store.readOrCreateSecret()
    #expect(secret.count == 32)
    #expect(Set(secret).count > 1, "random bytes, not a fill")
    var status = stat()
    #expect(stat(folder.file("secret"), &status) == 0)
    #expect(status.st_mode & 0o777 == 0o600)
    #expect(try store.readOrCreateSecret() == secret)
    store.close()
    let (reopened, _) = try openStore(folder)
    defer { reopened.close() }
    #expect(try reopened.readOrCreateSecret() == secret)
    #expect(folder.read("secret.tmp") == nil)
}

@Test func namedSecretsAreSeparate() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let (store, _) = try openStore(folder)
    defer { store.close() }
    let first = try store.readOrCreateSecret(named: "a", bytes: 32)
    let second = try store.readOrCreateSecret(named: "b", bytes: 64)
    #expect(first.count == 32)
    #expect(second.count == 64)
}

@Test func refusesTooShortSecret() throws {
    let folder = TemporaryFolder()
    defer { folder.remove() }
    let (store, _) = try openStore(folder)
    defer { store.close() }
    folder.write("secret", "short")
    #expect(throws: StoreError.invalidSecret(path: folder.file("secret"), reason: "it holds 5 bytes, fewer than 32")) {
        try store.readOrCreateSecret()
    }
}
