import Testing
@testable import Chat

private let secret = Array("a secret of thirty-two bytes!!!!".utf8)

@Test func signedTokenVerifies() {
    let token = SessionToken(userID: "u1", sessionID: "s1", expiresAt: 2000)
    #expect(SessionToken.verify(token.signed(with: secret), secret: secret, now: 1000) == token)
}

@Test func tamperedPayloadIsRejected() {
    let token = SessionToken(userID: "u1", sessionID: "s1", expiresAt: 2000).signed(with: secret)
    let forged = SessionToken(userID: "admin", sessionID: "s1", expiresAt: 2000).signed(with: Array("other".utf8))
    let spliced = String(forged.split(separator: ".")[0]) + "." + String(token.split(separator: ".")[1])
    #expect(SessionToken.verify(spliced, secret: secret, now: 1000) == nil)
}

@Test func tokenSignedWithAnotherSecretIsRejected() {
    let token = SessionToken(userID: "u1", sessionID: "s1", expiresAt: 2000).signed(with: Array("other".utf8))
    #expect(SessionToken.verify(token, secret: secret, now: 1000) == nil)
}

@Test func expiredTokenIsRejected() {
    let token = SessionToken(userID: "u1", sessionID: "s1", expiresAt: 2000).signed(with: secret)
    #expect(SessionToken.verify(token, secret: secret, now: 2000) == nil)
}

@Test func garbageTokensAreRejected() {
    for garbage in ["", ".", "abc", "a.b.c", "!!!.???", String(repeating: "a", count: 5000)] {
        #expect(SessionToken.verify(garbage, secret: secret, now: 0) == nil)
    }
}

@Test func sessionIDsAreRandom() {
    #expect(SessionToken.newSessionID() != SessionToken.newSessionID())
}
