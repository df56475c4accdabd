import Glibc
import Posix
import TLS

/// Shared test material: one self-signed certificate generated per test process, and fresh
/// temporary directories for tests that need their own files.
enum Fixture {
    /// Paths of the shared development certificate and key.
    static let certificate: (certificatePath: String, keyPath: String) = {
        do {
            return try writeCertificate(toDirectory: temporaryDirectory())
        } catch {
            preconditionFailure("cannot create the test certificate: \(error)")
        }
    }()

    /// A server context loaded from the shared certificate.
    static let context: TLSContext = {
        do {
            return try TLSContext(
                certificateChainPath: certificate.certificatePath, privateKeyPath: certificate.keyPath)
        } catch {
            preconditionFailure("cannot load the test certificate: \(error)")
        }
    }()

    /// Generates a certificate and key and writes them as `cert.pem` and `key.pem` into `directory`.
    static func writeCertificate(toDirectory directory: String) throws -> (certificatePath: String, keyPath: String) {
        let pair = try SelfSignedCertificate.generate()
        let paths = (certificatePath: directory + "/cert.pem", keyPath: directory + "/key.pem")
        try FileSystem.writeFile(pair.certificatePEM, to: paths.certificatePath, mode: 0o644)
        try FileSystem.writeFile(pair.keyPEM, to: paths.keyPath, mode: 0o600)
        return paths
    }

    /// Creates a new empty directory under $TMPDIR (else /tmp) and returns its path.
    static func temporaryDirectory() -> String {
        let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array((base + "/switchboard-tls-XXXXXX").utf8CString)
        return template.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress, let path = mkdtemp(base) else {
                preconditionFailure("mkdtemp failed")
            }
            return String(cString: path)
        }
    }

    /// The permission bits of a file, or nil if it cannot be stat'ed.
    static func mode(of path: String) -> mode_t? {
        var status = stat()
        guard stat(path, &status) == 0 else {
            return nil
        }
        return status.st_mode & 0o777
    }
}
