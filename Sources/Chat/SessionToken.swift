import Bytes
import JSON
import Crypto

/// Signed session tokens: `base64url(payload).base64url(HMAC-SHA256(secret, payload))`.
///
/// The payload is the JSON `{"exp":<seconds>,"sid":"<session>","uid":"<user>"}`. The signature
/// is checked in constant time before the payload is even parsed, so a forged token costs the
/// server one HMAC and teaches the forger nothing. Expiry is in the payload; revocation is the
/// service's list of revoked session ids.
public struct SessionToken: Sendable, Equatable {
    /// The user the token was issued to.
    public var userID: String
    /// The session's own random id: what `logout` revokes.
    public var sessionID: String
    /// Expiry in seconds since the epoch.
    public var expiresAt: Int64

    public init(userID: String, sessionID: String, expiresAt: Int64) {
        self.userID = userID
        self.sessionID = sessionID
        self.expiresAt = expiresAt
    }

    /// A fresh random session id (96 bits, base64url).
    public static func newSessionID() -> String {
        Base64.encode(Crypto.randomBytes(12), .url)
    }

    /// The token string for this session, signed with `secret`.
    public func signed(with secret: [UInt8]) -> String {
        let payload: JSONValue = ["uid": .string(userID), "sid": .string(sessionID), "exp": .integer(expiresAt)]
        let bytes = payload.serialized
        let signature = Crypto.hmacSHA256(key: secret, message: bytes)
        return Base64.encode(bytes, .url) + "." + Base64.encode(signature, .url)
    }

    /// The session in `token` when its signature is right and it has not expired at `now`
    /// (seconds since the epoch); nil for anything else.
    public static func verify(_ token: String, secret: [UInt8], now: Int64) -> SessionToken? {
        guard token.utf8.count <= 1024 else { return nil }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2,
              let payload = Base64.decode(String(parts[0]), .url),
              let signature = Base64.decode(String(parts[1]), .url),
              Crypto.constantTimeEquals(Crypto.hmacSHA256(key: secret, message: payload), signature),
              let json = try? JSONValue.parse(payload, limits: JSONLimits(maxDepth: 2, maxBytes: 1024)),
              let userID = json["uid"]?.stringValue,
              let sessionID = json["sid"]?.stringValue,
              let expiresAt = json["exp"]?.int64Value,
              expiresAt > now
        else { return nil }
        return SessionToken(userID: userID, sessionID: sessionID, expiresAt: expiresAt)
    }
}
