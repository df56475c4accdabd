import Bytes
import JSON
import Store

/// `signup`, `login`, `auth`, `logout`, `users`, `profile`.
extension ChatService {
    func signup(_ request: ChatRequest, _ session: ChatSession<Client>) throws(ChatError) {
        guard configuration.allowSignup else {
            throw ChatError(.forbidden, "signup is disabled on this server; ask its operator for an account")
        }
        let email = try Self.validEmail(request.required("email"))
        let password = try request.required("password")
        guard password.count >= 8 else { throw ChatError(.badRequest, "password must be at least 8 characters") }
        try checkPasswordLength(password)
        let name = try Self.validName(request.required("name"), what: "name")
        let avatar = try validURL(request.string("avatar"), what: "avatar")
        // Counted before the email is looked up: `conflict` tells whether an email is registered,
        // so asking is throttled like signing up.
        guard signupRate.admit(session.address, now: clock.monotonicNanoseconds()) else {
            let wait = signupRate.secondsUntilToken(session.address, now: clock.monotonicNanoseconds())
            throw ChatError(.rateLimited, "too many signups from your address; try again in \(wait) seconds")
        }
        guard state.emails[email] == nil, !reservedEmails.contains(email) else {
            throw ChatError.emailTaken
        }
        reservedEmails.insert(email)
        let iterations = configuration.passwordIterations
        let started = transport.performBlocking({ PasswordHash.make(password, iterations: iterations) }, then: { [self] hash in
            let uid = ids.next(milliseconds: clock.milliseconds())
            claim(email, for: uid) { [self] refusal in
                reservedEmails.remove(email)
                if let refusal { return fail(session, request.id, refusal) }
                let now = clock.milliseconds()
                let user = ChatUser(name: name, avatar: avatar, createdAt: now)
                let credentials = ChatAuth(email: email, passwordHash: hash)
                state.users[uid] = user
                state.auth[uid] = credentials
                state.emails[email] = uid
                let mutations: [Mutation] = [
                    .set(path: ["Users", uid], value: user.treeValue),
                    .set(path: ["Auth", uid], value: credentials.treeValue(now: 0)),
                ]
                commit(mutations) { [self] succeeded in
                    guard succeeded else {
                        releaseEmail?(email, uid)
                        return fail(session, request.id, .storeFailed)
                    }
                    signIn(session, request, uid)
                }
            }
        })
        guard started else {
            reservedEmails.remove(email)
            signupRate.refund(session.address)
            throw ChatError.hashingBusy
        }
    }

    /// Cluster mode: makes `email` the new account `uid`'s across the cluster before it is
    /// stored (`claimEmail`), so two nodes cannot both sign the same email up. `done` gets nil,
    /// or the error to answer: `conflict` when another account has it, `unavailable` without
    /// Redis. On a single node the state's own check (in `signup`) is all there is.
    private func claim(_ email: String, for uid: String, _ done: @escaping (ChatError?) -> Void) {
        guard let claimEmail else { return done(nil) }
        claimEmail(email, uid) { result in
            switch result {
            case .success(true): done(nil)
            case .success(false): done(.emailTaken)
            case .failure(let error): done(error)
            }
        }
    }

    func login(_ request: ChatRequest, _ session: ChatSession<Client>) throws(ChatError) {
        // Checked like a signup's: no account has another form, and the failure count is kept
        // per email, so its key stays small.
        let email = try Self.validEmail(request.required("email"))
        let password = try request.required("password")
        try checkPasswordLength(password)
        let accountKey = LoginThrottle.accountKey(email)
        let addressKey = LoginThrottle.addressKey(session.address)
        let wait = loginThrottle.secondsToWait([accountKey, addressKey], now: clock.monotonicNanoseconds())
        guard wait == 0 else {
            throw ChatError(.rateLimited, "too many failed logins; try again in \(wait) seconds")
        }
        let uid = state.emails[email]
        // An unknown email is checked against a decoy hash, so both failures take as long.
        let stored = uid.flatMap { state.auth[$0]?.passwordHash } ?? PasswordHash.decoy
        let started = transport.performBlocking({ PasswordHash.verify(password, against: stored) }, then: { [self] matches in
            guard matches, let uid, state.users[uid] != nil else {
                let now = clock.monotonicNanoseconds()
                loginThrottle.failed(accountKey, freeFailures: LoginThrottle.accountFreeFailures, now: now)
                loginThrottle.failed(addressKey, freeFailures: LoginThrottle.addressFreeFailures, now: now)
                return fail(session, request.id, .badCredentials)
            }
            loginThrottle.succeeded(accountKey)
            signIn(session, request, uid)
        })
        guard started else { throw ChatError.hashingBusy }
    }

    private func checkPasswordLength(_ password: String) throws(ChatError) {
        guard password.utf8.count <= configuration.maxPasswordBytes else {
            throw ChatError(.badRequest, "password must be at most \(configuration.maxPasswordBytes) bytes")
        }
    }

    /// Issues a new token for `uid`, signs the connection in and replies `{token, user}`.
    private func signIn(_ session: ChatSession<Client>, _ request: ChatRequest, _ uid: String) {
        guard session.isOpen, let user = state.users[uid] else { return }
        let token = SessionToken(
            userID: uid, sessionID: SessionToken.newSessionID(), expiresAt: clock.seconds + configuration.tokenLifetime)
        attach(session, token)
        reply(session, request) { writer in
            writer.string("token", token.signed(with: secret))
            writer.object("user") { user.write(into: &$0, id: uid, online: true) }
        }
    }

    func authenticate(_ request: ChatRequest, _ session: ChatSession<Client>) throws(ChatError) {
        guard let claims = validSession(try request.required("token")), let user = state.users[claims.userID] else {
            throw ChatError.badToken
        }
        attach(session, claims)
        reply(session, request) { writer in
            writer.object("user") { user.write(into: &$0, id: claims.userID, online: true) }
        }
    }

    /// The session in `token` when it is signed, unexpired, unrevoked and its user exists.
    func validSession(_ token: String) -> SessionToken? {
        guard !secret.isEmpty, let claims = SessionToken.verify(token, secret: secret, now: clock.seconds),
              state.users[claims.userID] != nil,
              !state.isRevoked(uid: claims.userID, sid: claims.sessionID)
        else { return nil }
        return claims
    }

    /// The display name of the user a valid `token` belongs to (for plain rooms).
    public func userName(forToken token: String) -> String? {
        validSession(token).flatMap { state.users[$0.userID]?.name }
    }

    func logout(_ request: ChatRequest, _ session: ChatSession<Client>, _ uid: String) throws(ChatError) {
        guard let sid = session.sessionID else { throw ChatError.notSignedIn }
        let expiry = session.tokenExpiry
        state.auth[uid]?.revoked[sid] = expiry
        commit([.set(path: ["Auth", uid, "revoked", sid], value: .integer(expiry))]) { [self] succeeded in
            guard succeeded else { return fail(session, request.id, .storeFailed) }
            reply(session, request)
            // Every connection that signed in with this token is signed out with it.
            for other in userSessions[uid]?.values.filter({ $0.sessionID == sid }) ?? [] { detach(other) }
        }
    }

    func listUsers(_ request: ChatRequest, _ session: ChatSession<Client>) {
        let sorted = state.users.sorted { $0.value.name != $1.value.name ? $0.value.name < $1.value.name : $0.key < $1.key }
        reply(session, request) { writer in
            writer.objects("users", sorted) { nested, entry in
                entry.value.write(into: &nested, id: entry.key, online: isOnline(entry.key))
            }
        }
    }

    func profile(_ request: ChatRequest, _ session: ChatSession<Client>, _ uid: String) throws(ChatError) {
        guard var user = state.users[uid] else { throw ChatError.notSignedIn }
        var changes: [String: JSONValue] = [:]
        if let name = try request.string("name") {
            user.name = try Self.validName(name, what: "name")
            changes["name"] = .string(user.name)
        }
        if request["avatar"] != nil {
            user.avatar = try validURL(request.string("avatar"), what: "avatar")
            changes["avatar"] = user.avatar.map { .string($0) } ?? .null
        }
        state.users[uid] = user
        let reply: () -> Void = { [self] in
            self.reply(session, request) { writer in
                writer.object("user") { user.write(into: &$0, id: uid, online: true) }
            }
        }
        guard !changes.isEmpty else { return reply() }
        commit([.merge(path: ["Users", uid], value: changes)]) { [self] succeeded in
            guard succeeded else { return fail(session, request.id, .storeFailed) }
            reply()
        }
    }

    // MARK: Validation

    static func validEmail(_ email: String) throws(ChatError) -> String {
        let lowered = email.asciiLowercased
        let parts = lowered.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty, lowered.utf8.count <= 254,
              !lowered.contains(where: { $0 == " " || $0.isNewline })
        else { throw ChatError(.badRequest, "email must look like name@example.com") }
        return lowered
    }

    /// 1 to 64 characters, and at most 256 bytes: a character may be one letter with any number
    /// of combining marks, so the count alone would let one "character" fill a request.
    static func validName(_ name: String, what: String) throws(ChatError) -> String {
        let trimmed = String(name.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
        guard !trimmed.isEmpty, trimmed.count <= 64, trimmed.utf8.count <= 256 else {
            throw ChatError(.badRequest, "\(what) must be 1 to 64 characters (at most 256 bytes)")
        }
        return trimmed
    }

    /// An http(s) URL of at most 2048 bytes, or the relative URL of media stored here
    /// (`/media/<id>`, as an upload's answer gives it), or nil.
    func validURL(_ url: String?, what: String) throws(ChatError) -> String? {
        guard let url else { return nil }
        if url.hasPrefix("/") {
            let id = String(url.dropFirst("/media/".count))
            guard url.hasPrefix("/media/"), Self.isMediaID(id), state.media[id] != nil else {
                throw ChatError(.badRequest, "\(what) must be an http:// or https:// URL, or /media/<id> of an upload")
            }
            return url
        }
        let lowered = url.asciiLowercased
        guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://"), url.utf8.count <= 2048,
              url.utf8.count > (lowered.hasPrefix("https") ? 8 : 7),
              !url.contains(where: { $0 == " " || $0.isNewline })
        else { throw ChatError(.badRequest, "\(what) must be an http:// or https:// URL, or /media/<id> of an upload") }
        return url
    }
}
