import COpenSSL

/// Hashing, signing and randomness from OpenSSL, for passwords, session tokens and certificates.
///
/// Every function is a thin, allocation-light wrapper over a one-shot OpenSSL call and is safe
/// from any thread.
public enum Crypto {
    /// Length of a SHA-256 digest and of an HMAC-SHA256 tag.
    public static let sha256Length = 32

    /// Returns `count` cryptographically secure random bytes (`RAND_bytes`).
    ///
    /// OpenSSL's generator only fails when the system cannot seed it at all; handing out
    /// predictable salts or tokens would be worse than stopping, so that stops the process.
    public static func randomBytes(_ count: Int) -> [UInt8] {
        guard count > 0 else {
            return []
        }
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            let result = RAND_bytes(buffer.baseAddress, Int32(count))
            precondition(result == 1, "OpenSSL's random generator failed; refusing to continue without entropy")
            initialized = count
        }
    }

    /// `count` random bytes as `2 * count` lower-case hex digits.
    public static func randomHex(_ count: Int) -> String {
        let digits = Array("0123456789abcdef")
        return String(randomBytes(count).flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
    }

    /// Derives a key from a password with PBKDF2-HMAC-SHA256 (`PKCS5_PBKDF2_HMAC`, RFC 8018).
    ///
    /// - Parameters:
    ///   - iterations: work factor; at least 210,000 for stored passwords (docs/security.md).
    ///   - keyLength: bytes of output, 32 by default (one SHA-256 block, no extra work).
    public static func pbkdf2SHA256(password: [UInt8], salt: [UInt8], iterations: Int, keyLength: Int = 32) -> [UInt8] {
        guard keyLength > 0 else {
            return []
        }
        return [UInt8](unsafeUninitializedCapacity: keyLength) { output, initialized in
            let result = withNonNullBytes(password) { passwordBytes in
                withNonNullBytes(salt) { saltBytes in
                    PKCS5_PBKDF2_HMAC(
                        passwordBytes.base.assumingMemoryBound(to: CChar.self), Int32(password.count),
                        saltBytes.base.assumingMemoryBound(to: UInt8.self), Int32(salt.count),
                        Int32(clamping: max(iterations, 1)), EVP_sha256(), Int32(keyLength), output.baseAddress)
                }
            }
            precondition(result == 1, "PKCS5_PBKDF2_HMAC failed for valid arguments")
            initialized = keyLength
        }
    }

    /// Returns HMAC-SHA256 of `message` under `key` (RFC 2104).
    public static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: sha256Length) { output, initialized in
            var length: UInt32 = 0
            let result = withNonNullBytes(key) { keyBytes in
                withNonNullBytes(message) { messageBytes in
                    HMAC(
                        EVP_sha256(), keyBytes.base, Int32(key.count),
                        messageBytes.base.assumingMemoryBound(to: UInt8.self), message.count,
                        output.baseAddress, &length)
                }
            }
            precondition(result != nil && Int(length) == sha256Length, "HMAC-SHA256 failed for valid arguments")
            initialized = sha256Length
        }
    }

    /// Returns the SHA-256 digest of `data` (`EVP_Digest`).
    public static func sha256(_ data: [UInt8]) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: sha256Length) { output, initialized in
            var length: UInt32 = 0
            let result = withNonNullBytes(data) { bytes in
                EVP_Digest(bytes.base, data.count, output.baseAddress, &length, EVP_sha256(), nil)
            }
            precondition(result == 1 && Int(length) == sha256Length, "SHA-256 failed for valid arguments")
            initialized = sha256Length
        }
    }

    /// Compares two byte strings in time that depends only on their length (`CRYPTO_memcmp`),
    /// so a token check leaks nothing about where a guess went wrong.
    ///
    /// - Returns: false when the lengths differ (lengths are not secret).
    public static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else {
            return false
        }
        guard !a.isEmpty else {
            return true
        }
        return a.withUnsafeBytes { left in
            b.withUnsafeBytes { right in
                CRYPTO_memcmp(left.baseAddress, right.baseAddress, a.count) == 0
            }
        }
    }

    /// A pointer that is never null, even for an empty array, because several OpenSSL entry
    /// points treat a null key or message as an error rather than as "no bytes".
    struct NonNullBytes {
        /// Start of the bytes; points at a dummy byte when there are none.
        let base: UnsafeRawPointer
    }

    /// Runs `body` with a non-null pointer to `bytes`.
    static func withNonNullBytes<Result>(_ bytes: [UInt8], _ body: (NonNullBytes) -> Result) -> Result {
        bytes.withUnsafeBytes { buffer in
            if let base = buffer.baseAddress {
                return body(NonNullBytes(base: base))
            }
            return withUnsafeBytes(of: UInt8(0)) { dummy in
                guard let base = dummy.baseAddress else {
                    preconditionFailure("a one-byte local has an address")
                }
                return body(NonNullBytes(base: base))
            }
        }
    }
}
