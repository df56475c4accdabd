import Bytes
import Crypto

/// Short-lived tokens for `GET /api/v1/presence/stream?token=...`.
///
/// A browser's `EventSource` cannot send an `Authorization` header, and the admin token must
/// not travel in a URL (URLs end up in proxy logs and browser history). So the monitor page
/// trades the admin token, in a header, for one of these: `<expiry>.<base64url(HMAC-SHA256(admin
/// token, "presence-stream.<expiry>"))>`, valid for a minute and good for nothing but the stream.
/// Stateless: changing the admin token revokes every one.
enum StreamToken {
    static let lifetimeSeconds: Int64 = 60

    /// A token valid until `expiresAt` (seconds since the epoch).
    static func issue(key: [UInt8], expiresAt: Int64) -> String {
        "\(expiresAt)." + Base64.encode(signature(key: key, expiresAt: expiresAt), .url)
    }

    /// Whether `token` was issued with `key` and has not expired at `now` (seconds since the epoch).
    static func verify(_ token: String, key: [UInt8], now: Int64) -> Bool {
        guard token.utf8.count <= 128 else { return false }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let expiresAt = Int64(parts[0]), expiresAt >= now,
              let signature = Base64.decode(String(parts[1]), .url)
        else { return false }
        return Crypto.constantTimeEquals(self.signature(key: key, expiresAt: expiresAt), signature)
    }

    private static func signature(key: [UInt8], expiresAt: Int64) -> [UInt8] {
        Crypto.hmacSHA256(key: key, message: Array("presence-stream.\(expiresAt)".utf8))
    }
}
