import Bytes

/// The server's part of the opening handshake (RFC 6455 §4.2): checking the client's key and
/// deriving the `Sec-WebSocket-Accept` value that proves the server understood the upgrade.
public enum WebSocketHandshake {
    /// The GUID that §1.3 appends to every key, so the accept value cannot come from a server
    /// that merely echoes headers.
    static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// The `Sec-WebSocket-Accept` value for a client's `Sec-WebSocket-Key`:
    /// base64(SHA-1(key + GUID)).
    public static func acceptKey(for clientKey: String) -> String {
        Base64.encode(SHA1.hash(Array(clientKey.utf8) + Array(guid.utf8)))
    }

    /// Validates a client key: base64 of exactly 16 bytes (§4.1 step 7), so 24 characters
    /// ending in `==`.
    public static func isValidKey(_ key: String) -> Bool {
        guard key.utf8.count == 24, let decoded = Base64.decode(key) else { return false }
        return decoded.count == 16
    }
}
