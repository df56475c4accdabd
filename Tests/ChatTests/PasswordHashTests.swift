import Testing
@testable import Chat

@Test func passwordHashVerifiesTheRightPassword() {
    let stored = PasswordHash.make("correct horse")
    #expect(PasswordHash.verify("correct horse", against: stored))
}

@Test func passwordHashRejectsAWrongPassword() {
    let stored = PasswordHash.make("correct horse", iterations: 1000)
    #expect(!PasswordHash.verify("correct horsf", against: stored))
    #expect(!PasswordHash.verify("", against: stored))
}

@Test func passwordHashIsSelfDescribingWithTheDefaultIterations() {
    let parts = PasswordHash.make("secret-password").split(separator: "$")
    #expect(parts.count == 4)
    #expect(parts[0] == "pbkdf2-sha256")
    #expect(Int(parts[1]).map { $0 >= 210_000 } == true)
    // 16 bytes of salt are 22 base64url characters.
    #expect(parts[2].count == 22)
}

@Test func samePasswordHashesDifferentlyEachTime() {
    #expect(PasswordHash.make("same", iterations: 1000) != PasswordHash.make("same", iterations: 1000))
}

@Test func malformedStoredHashNeverMatches() {
    for stored in ["", "plain", "pbkdf2-sha256$x$y$z", "md5$1$AAAA$AAAA", "pbkdf2-sha256$0$AAAA$AAAA"] {
        #expect(!PasswordHash.verify("anything", against: stored))
    }
}
