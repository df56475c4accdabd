import Bytes
import Crypto

/// Stored password hashes: PBKDF2-HMAC-SHA256 with a random 16-byte salt, as the
/// self-describing string `pbkdf2-sha256$<iterations>$<salt b64url>$<hash b64url>`.
///
/// The iteration count travels with the hash, so raising it later leaves old hashes valid.
/// Each call costs about 100 ms of CPU at the default count: callers run it off the event loop.
public enum PasswordHash {
    /// The floor for new hashes (OWASP's 2023 figure for PBKDF2-HMAC-SHA256).
    public static let defaultIterations = 210_000
    static let scheme = "pbkdf2-sha256"

    /// A new stored hash of `password`.
    public static func make(_ password: String, iterations: Int = defaultIterations) -> String {
        let salt = Crypto.randomBytes(16)
        let hash = Crypto.pbkdf2SHA256(password: Array(password.utf8), salt: salt, iterations: iterations)
        return "\(scheme)$\(iterations)$\(Base64.encode(salt, .url))$\(Base64.encode(hash, .url))"
    }

    /// Whether `password` matches `stored`; false for a malformed stored string.
    public static func verify(_ password: String, against stored: String) -> Bool {
        let parts = stored.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == scheme,
              let iterations = Int(parts[1]), iterations > 0, iterations <= 10_000_000,
              let salt = Base64.decode(String(parts[2]), .url),
              let expected = Base64.decode(String(parts[3]), .url), !expected.isEmpty
        else { return false }
        let actual = Crypto.pbkdf2SHA256(
            password: Array(password.utf8), salt: salt, iterations: iterations, keyLength: expected.count)
        return Crypto.constantTimeEquals(actual, expected)
    }

    /// A valid hash of a random password, checked against on a login for an unknown email so
    /// that the reply takes as long as for a known one (no account probing by timing).
    public static let decoy: String = make(Base64.encode(Crypto.randomBytes(16), .url))
}
