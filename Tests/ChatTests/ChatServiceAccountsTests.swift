import JSON
import Testing
@testable import Chat

@Test func signupRepliesWithTokenAndUserButNeverTheEmail() throws {
    let h = try Harness()
    let client = h.connect("a")
    let reply = h.call(client, ["op": "signup", "email": "Ada@Example.com", "password": "password1", "name": "Ada"])
    #expect(reply.isOK)
    #expect(reply["token"]?.stringValue?.isEmpty == false)
    #expect(reply["user"]?["name"] == "Ada")
    #expect(reply["user"]?["online"] == true)
    #expect(!reply.jsonString.lowercased().contains("example.com"))
    #expect(!reply.jsonString.contains("pbkdf2"))
}

@Test func signupWithARegisteredEmailIsAConflict() throws {
    let h = try Harness()
    _ = h.user("ada")
    let reply = h.call(h.connect("b"), ["op": "signup", "email": "ADA@example.com", "password": "password1", "name": "Other"])
    #expect(reply.code == "conflict")
}

@Test func signupChecksPasswordLengthAndEmail() throws {
    let h = try Harness()
    let client = h.connect("a")
    let short = h.call(client, ["op": "signup", "email": "a@b.c", "password": "1234567", "name": "A"])
    #expect(short.code == "bad_request")
    #expect(short["message"]?.stringValue?.contains("8 characters") == true)
    #expect(h.call(client, ["op": "signup", "email": "nope", "password": "12345678", "name": "A"]).code == "bad_request")
    #expect(h.call(client, ["op": "signup", "email": "a@b.c", "password": "12345678", "name": ""]).code == "bad_request")
}

@Test func signupCanBeDisabled() throws {
    let h = try Harness { $0.allowSignup = false }
    let reply = h.call(h.connect("a"), ["op": "signup", "email": "a@b.c", "password": "12345678", "name": "A"])
    #expect(reply.code == "forbidden")
}

@Test func loginGivesTheSameAnswerForWrongEmailAndWrongPassword() throws {
    let h = try Harness()
    _ = h.user("ada")
    let client = h.connect("x")
    let wrongPassword = h.call(client, ["op": "login", "email": "ada@example.com", "password": "wrong-password"])
    let wrongEmail = h.call(client, ["op": "login", "email": "nobody@example.com", "password": "password-ada"])
    #expect(wrongPassword.code == "unauthorized")
    #expect(wrongPassword["message"] == wrongEmail["message"])
    let right = h.call(client, ["op": "login", "email": "ADA@example.com", "password": "password-ada"])
    #expect(right.isOK)
    #expect(right["user"]?["name"] == "ada")
}

@Test func onlyPingAndSignInWorkBeforeAuthentication() throws {
    let h = try Harness()
    let client = h.connect("a")
    #expect(h.call(client, ["op": "users"]).code == "unauthorized")
    #expect(h.call(client, ["op": "create", "name": "x"]).code == "unauthorized")
    let pong = h.call(client, ["op": "ping", "id": 7])
    #expect(pong["op"] == "pong")
    #expect(pong["id"] == 7)
}

@Test func authWithATokenResumesTheSession() throws {
    let h = try Harness()
    let ada = h.user("ada")
    let client = h.connect("second")
    let reply = h.call(client, ["op": "auth", "token": .string(ada.token)])
    #expect(reply["user"]?["id"] == .string(ada.id))
    #expect(h.call(client, ["op": "users"]).isOK)
    #expect(h.call(h.connect("third"), ["op": "auth", "token": "forged.token"]).code == "unauthorized")
}

@Test func tokenInTheURLSignsInAndAnInvalidOneDoesNot() throws {
    let h = try Harness()
    let ada = h.user("ada")
    #expect(h.call(h.connect("url", token: ada.token), ["op": "users"]).isOK)
    #expect(h.call(h.connect("bad", token: "x.y"), ["op": "users"]).code == "unauthorized")
}

@Test func expiredTokenIsRefused() throws {
    let h = try Harness { $0.tokenLifetime = 60 }
    let ada = h.user("ada")
    h.advance(61_000)
    #expect(h.call(h.connect("later"), ["op": "auth", "token": .string(ada.token)]).code == "unauthorized")
}

@Test func aConnectionIsSignedOutWhenItsTokenExpires() throws {
    let h = try Harness { $0.tokenLifetime = 60 }
    let ada = h.user("ada")
    h.advance(30_000)
    let bob = h.user("bob")
    let gid = JSONValue.string(h.group("Team", owner: ada.client, members: [bob.client]))
    h.call(ada.client, ["op": "subscribe", "group": gid])
    h.call(bob.client, ["op": "subscribe", "group": gid])
    h.service.flushPresence()
    _ = h.events(ada.client)
    _ = h.events(bob.client)
    h.advance(29_000)
    h.service.signOutExpired()
    #expect(h.call(ada.client, ["op": "users"]).isOK)
    h.advance(1_000)
    h.service.signOutExpired()
    h.service.flushPresence()
    #expect(h.events(bob.client).first?["left"] == [.string(ada.id)])
    #expect(h.call(ada.client, ["op": "users"]).code == "unauthorized")
    #expect(h.call(bob.client, ["op": "send", "group": gid, "text": "still here?"]).isOK)
    #expect(h.events(ada.client).isEmpty)
    // Bob's token, issued 30 s later, expires 30 s later.
    #expect(h.call(bob.client, ["op": "users"]).isOK)
    h.advance(30_000)
    h.service.signOutExpired()
    #expect(h.call(bob.client, ["op": "users"]).code == "unauthorized")
}

@Test func logoutRevokesTheToken() throws {
    let h = try Harness()
    let ada = h.user("ada")
    #expect(h.call(ada.client, ["op": "logout"]).isOK)
    #expect(h.call(ada.client, ["op": "users"]).code == "unauthorized")
    #expect(h.call(h.connect("again"), ["op": "auth", "token": .string(ada.token)]).code == "unauthorized")
}

@Test func revokedTokenStaysRevokedAfterARestart() throws {
    let h = try Harness()
    let ada = h.user("ada")
    h.call(ada.client, ["op": "logout"])
    try h.restart()
    #expect(h.call(h.connect("again"), ["op": "auth", "token": .string(ada.token)]).code == "unauthorized")
    let login = h.call(h.connect("login"), ["op": "login", "email": "ada@example.com", "password": "password-ada"])
    #expect(login.isOK)
}

@Test func usersAreSortedByNameWithOnlineFlags() throws {
    let h = try Harness()
    let zoe = h.user("zoe")
    let ada = h.user("ada")
    _ = h.user("mia")
    h.service.closed(zoe.client)
    let users = h.call(ada.client, ["op": "users"])["users"]?.arrayValue ?? []
    #expect(users.map { $0["name"] } == ["ada", "mia", "zoe"])
    #expect(users.map { $0["online"] } == [true, true, false])
    #expect(users.allSatisfy { $0["email"] == nil })
}

@Test func profileChangesNameAndAvatar() throws {
    let h = try Harness()
    let ada = h.user("ada")
    let reply = h.call(ada.client, ["op": "profile", "name": "Ada L.", "avatar": "https://img.example/a.png"])
    #expect(reply["user"]?["name"] == "Ada L.")
    #expect(reply["user"]?["avatar"] == "https://img.example/a.png")
    #expect(h.call(ada.client, ["op": "profile", "avatar": "javascript:alert(1)"]).code == "bad_request")
    try h.restart()
    #expect(h.service.state.users[ada.id]?.name == "Ada L.")
}

/// What switchboard.js asks at its token's expiry (docs/client.md): it must change nothing.
@Test func profileWithoutArgumentsAnswersTheUserAndStoresNothing() throws {
    let h = try Harness()
    let ada = h.user("ada")
    h.settle()
    let before = h.store.statistics.mutations
    let reply = h.call(ada.client, ["op": "profile"])
    #expect(reply["user"]?["id"] == .string(ada.id))
    #expect(reply["user"]?["name"] == "ada")
    h.settle()
    #expect(h.store.statistics.mutations == before)
}

@Test func loginRefusesHugePasswordsAndBusyHashing() throws {
    let h = try Harness()
    let client = h.connect("a")
    let huge = String(repeating: "x", count: 100_000)
    #expect(h.call(client, ["op": "login", "email": "a@b.c", "password": .string(huge)]).code == "bad_request")
    h.transport.busy = true
    #expect(h.call(client, ["op": "login", "email": "a@b.c", "password": "password1"]).code == "rate_limited")
    #expect(h.call(client, ["op": "signup", "email": "a@b.c", "password": "password1", "name": "A"]).code == "rate_limited")
    h.transport.busy = false
    #expect(h.call(client, ["op": "signup", "email": "a@b.c", "password": "password1", "name": "A"]).isOK,
            "a refused signup leaves the email free")
}

@Test func repeatedWrongPasswordsCloseTheAccountForAWhile() throws {
    let h = try Harness()
    _ = h.call(h.connect("s"), ["op": "signup", "email": "a@b.c", "password": "password1", "name": "A"])
    let guesser = h.connect("g")
    for _ in 0..<6 {
        #expect(h.call(guesser, ["op": "login", "email": "a@b.c", "password": "wrong-one"]).code == "unauthorized")
    }
    #expect(h.call(guesser, ["op": "login", "email": "a@b.c", "password": "password1"]).code == "rate_limited")
    h.now.nanoseconds += 2_000_000_000
    #expect(h.call(guesser, ["op": "login", "email": "a@b.c", "password": "password1"]).isOK)
}

@Test func signupsAreCountedPerAddress() throws {
    let h = try Harness { $0.signupsPerHour = 1 }
    let first = h.connect("a")
    #expect(h.call(first, ["op": "signup", "email": "a@b.c", "password": "password1", "name": "A"]).isOK)
    #expect(h.call(h.connect("b"), ["op": "signup", "email": "b@b.c", "password": "password1", "name": "B"]).code
            == "rate_limited")
    // Asking whether an email is taken counts too: the answer would be `conflict`.
    #expect(h.call(h.connect("c"), ["op": "signup", "email": "a@b.c", "password": "password1", "name": "A"]).code
            == "rate_limited")
}

@Test func aSignupRefusedWhileTheHashingWorkersAreBusyIsNotCounted() throws {
    // The refusal says "try again in a second": a client that does must not find its allowance spent.
    let h = try Harness { $0.signupsPerHour = 1 }
    let client = h.connect("a")
    h.transport.busy = true
    for _ in 0..<3 {
        #expect(h.call(client, ["op": "signup", "email": "a@b.c", "password": "password1", "name": "A"]).code
                == "rate_limited")
    }
    h.transport.busy = false
    #expect(h.call(client, ["op": "signup", "email": "a@b.c", "password": "password1", "name": "A"]).isOK)
}

@Test func namesAreBoundedInBytesAsWellAsCharacters() throws {
    let h = try Harness()
    let client = h.connect("a")
    // One character: a letter with 300 combining acute accents, 601 bytes.
    let heavy = JSONValue.string("a" + String(repeating: "\u{0301}", count: 300))
    #expect(h.call(client, ["op": "signup", "email": "a@b.c", "password": "password1", "name": heavy]).code == "bad_request")
    let ada = h.user("ada")
    #expect(h.call(ada.client, ["op": "profile", "name": heavy]).code == "bad_request")
    #expect(h.call(ada.client, ["op": "create", "name": heavy]).code == "bad_request")
    // 64 characters of two bytes each are a name.
    let wide = JSONValue.string(String(repeating: "é", count: 64))
    #expect(h.call(ada.client, ["op": "create", "name": wide]).isOK)
}

@Test func aLoginWithAMalformedEmailIsABadRequestAndCountsNoFailure() throws {
    let h = try Harness()
    let client = h.connect("g")
    let long = JSONValue.string(String(repeating: "x", count: 100_000) + "@example.com")
    for _ in 0..<30 {
        #expect(h.call(client, ["op": "login", "email": long, "password": "password1"]).code == "bad_request")
    }
    #expect(h.call(client, ["op": "login", "email": "nobody@example.com", "password": "password1"]).code == "unauthorized")
}
