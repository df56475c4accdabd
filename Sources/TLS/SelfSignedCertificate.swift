import COpenSSL
import Crypto

/// A development certificate for `switchboard cert --self-signed --out DIR`, made with OpenSSL's
/// APIs (no `openssl` command needed on the machine); the command writes the files.
///
/// The key is ECDSA P-256 (small, fast handshakes, accepted by every browser); the certificate
/// is valid for one year and names `localhost`, `127.0.0.1` and `::1` as subject alternative
/// names, which is what browsers match (they ignore the common name). It is self-signed, so
/// clients must trust it explicitly.
public enum SelfSignedCertificate {
    /// How long the certificate is valid: one year, counted from a minute ago to absorb clock skew.
    static let validitySeconds = 365 * 24 * 60 * 60
    static let backdateSeconds = 60

    /// Generates a key and a certificate for it, both as PEM text.
    ///
    /// - Throws: `TLSError` with kind `certificateGeneration` and OpenSSL's reason.
    public static func generate(commonName: String = "localhost") throws(TLSError) -> (certificatePEM: [UInt8], keyPEM: [UInt8]) {
        ERR_clear_error()
        guard let key = COpenSSL_EVP_EC_gen("P-256") else {
            throw TLSError.openSSL(.certificateGeneration, "could not generate a P-256 key")
        }
        defer { EVP_PKEY_free(key) }
        let certificate = try makeCertificate(key: key, commonName: commonName)
        defer { X509_free(certificate) }
        let certificatePEM = try pem { bio in PEM_write_bio_X509(bio, certificate) }
        let keyPEM = try pem { bio in PEM_write_bio_PrivateKey(bio, key, nil, nil, 0, nil, nil) }
        return (certificatePEM, keyPEM)
    }

    /// Builds and signs the X.509 v3 certificate for `key`.
    private static func makeCertificate(key: OpaquePointer, commonName: String) throws(TLSError) -> OpaquePointer {
        guard let certificate = X509_new() else {
            throw TLSError.openSSL(.certificateGeneration, "could not allocate a certificate")
        }
        // A positive 63-bit random serial: RFC 5280 wants serials unique per issuer, and a
        // regenerated development certificate must not collide with the one a browser cached.
        let serialBytes = Crypto.randomBytes(8)
        let serial = serialBytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) } & UInt64(Int64.max)
        let name = X509_get_subject_name(certificate)
        let built =
            X509_set_version(certificate, 2) == 1  // 2 means v3, which extensions require
            && ASN1_INTEGER_set_uint64(X509_get_serialNumber(certificate), serial) == 1
            && X509_gmtime_adj(X509_getm_notBefore(certificate), -backdateSeconds) != nil
            && X509_gmtime_adj(X509_getm_notAfter(certificate), validitySeconds) != nil
            && X509_set_pubkey(certificate, key) == 1
            && X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8, "Switchboard development", -1, -1, 0) == 1
            && X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, commonName, -1, -1, 0) == 1
            && X509_set_issuer_name(certificate, name) == 1
            && addExtensions(to: certificate, commonName: commonName)
            && X509_sign(certificate, key, EVP_sha256()) > 0
        guard built else {
            X509_free(certificate)
            throw TLSError.openSSL(.certificateGeneration, "could not build the self-signed certificate")
        }
        return certificate
    }

    /// Adds the extensions browsers and OpenSSL check on a server certificate.
    ///
    /// `CA:FALSE` plus `serverAuth` keeps it a plain leaf; `digitalSignature` is the only key use
    /// an ECDSA key needs in TLS; the SANs carry the names actually matched.
    private static func addExtensions(to certificate: OpaquePointer, commonName: String) -> Bool {
        var context = X509V3_CTX()
        COpenSSL_X509V3_set_ctx_nodb(&context)
        X509V3_set_ctx(&context, certificate, certificate, nil, nil, 0)
        var names = "DNS:" + commonName
        if commonName != "localhost" {
            names += ",DNS:localhost"
        }
        names += ",IP:127.0.0.1,IP:::1"
        let extensions: [(Int32, String)] = [
            (NID_basic_constraints, "critical,CA:FALSE"),
            (NID_key_usage, "critical,digitalSignature"),
            (NID_ext_key_usage, "serverAuth"),
            (NID_subject_key_identifier, "hash"),
            (NID_subject_alt_name, names),
        ]
        for (nid, value) in extensions {
            guard let ext = X509V3_EXT_conf_nid(nil, &context, nid, value) else {
                return false
            }
            defer { X509_EXTENSION_free(ext) }
            guard X509_add_ext(certificate, ext, -1) == 1 else {
                return false
            }
        }
        return true
    }

    /// Runs a `PEM_write_bio_*` call against a memory BIO and returns the PEM text's bytes.
    private static func pem(_ writeTo: (OpaquePointer) -> Int32) throws(TLSError) -> [UInt8] {
        guard let bio = BIO_new(BIO_s_mem()) else {
            throw TLSError.openSSL(.certificateGeneration, "could not allocate a memory BIO")
        }
        defer { BIO_free(bio) }
        guard writeTo(bio) == 1 else {
            throw TLSError.openSSL(.certificateGeneration, "could not encode PEM")
        }
        let length = Int(BIO_ctrl_pending(bio))
        return [UInt8](unsafeUninitializedCapacity: length) { buffer, initialized in
            let read = BIO_read(bio, buffer.baseAddress, Int32(length))
            initialized = max(Int(read), 0)
        }
    }
}
