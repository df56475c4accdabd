import JSON

/// A user's credentials and revoked sessions, stored under `Auth/<uid>` and never sent anywhere.
public struct ChatAuth: Sendable, Equatable {
    /// Lower-cased, the key of the email index.
    public var email: String
    /// A `PasswordHash` string.
    public var passwordHash: String
    /// Revoked session ids with the expiry of their token (seconds), after which the entry
    /// can be forgotten because the token is dead anyway.
    public var revoked: [String: Int64]

    public init(email: String, passwordHash: String, revoked: [String: Int64] = [:]) {
        self.email = email
        self.passwordHash = passwordHash
        self.revoked = revoked
    }
}

extension ChatAuth {
    /// The credentials a tree value describes, or nil without an email and a hash.
    init?(treeValue value: JSONValue) {
        guard let email = value["email"]?.stringValue, let hash = value["passwordHash"]?.stringValue else { return nil }
        var revoked: [String: Int64] = [:]
        for (sid, expiry) in value["revoked"]?.objectValue ?? [:] { revoked[sid] = expiry.int64Value ?? 0 }
        self.init(email: email, passwordHash: hash, revoked: revoked)
    }

    /// The stored form; sessions whose tokens expired before `now` (seconds) are left out.
    func treeValue(now: Int64) -> JSONValue {
        var fields: [String: JSONValue] = ["email": .string(email), "passwordHash": .string(passwordHash)]
        let live = revoked.filter { $0.value > now }
        if !live.isEmpty { fields["revoked"] = .object(live.mapValues { .integer($0) }) }
        return .object(fields)
    }
}
