import COpenSSL
import Glibc
import Testing
import TLS

/// Reads the first certificate of a PEM file.
private func readCertificate(_ path: String) -> OpaquePointer? {
    guard let bio = BIO_new_file(path, "r") else { return nil }
    defer { BIO_free(bio) }
    return PEM_read_bio_X509(bio, nil, nil, nil)
}

@Test func writesFilesThatAContextLoadsWithAPrivateKeyMode() throws {
    let directory = Fixture.temporaryDirectory() + "/certs"
    let paths = try SelfSignedCertificate.write(toDirectory: directory)
    #expect(paths.certificatePath == directory + "/cert.pem")
    #expect(paths.keyPath == directory + "/key.pem")
    #expect(Fixture.mode(of: paths.keyPath) == 0o600)
    #expect(Fixture.mode(of: paths.certificatePath) == 0o644)
    _ = try TLSContext(certificateChainPath: paths.certificatePath, privateKeyPath: paths.keyPath)
}

@Test func rewritingTightensAnExistingKeyFileMode() throws {
    let directory = Fixture.temporaryDirectory()
    let first = try SelfSignedCertificate.write(toDirectory: directory)
    #expect(chmod(first.keyPath, 0o644) == 0)
    let second = try SelfSignedCertificate.write(toDirectory: directory)
    #expect(Fixture.mode(of: second.keyPath) == 0o600)
}

@Test func certificateNamesLocalhostAndLoopbackAddresses() throws {
    let certificate = try #require(readCertificate(Fixture.certificate.certificatePath))
    defer { X509_free(certificate) }
    #expect(X509_check_host(certificate, "localhost", 0, 0, nil) == 1)
    #expect(X509_check_ip_asc(certificate, "127.0.0.1", 0) == 1)
    #expect(X509_check_ip_asc(certificate, "::1", 0) == 1)
    #expect(X509_check_host(certificate, "example.com", 0, 0, nil) == 0)
}

@Test func certificateIsValidForAboutAYear() throws {
    let certificate = try #require(readCertificate(Fixture.certificate.certificatePath))
    defer { X509_free(certificate) }
    var days: Int32 = 0
    var seconds: Int32 = 0
    #expect(ASN1_TIME_diff(&days, &seconds, X509_get0_notBefore(certificate), X509_get0_notAfter(certificate)) == 1)
    #expect(days == 365)
}

@Test func unwritableDirectoryIsNamedInTheError() throws {
    do {
        _ = try SelfSignedCertificate.write(toDirectory: "/proc/switchboard-cannot-exist")
        Issue.record("writing into /proc succeeded")
    } catch {
        #expect(error.kind == .certificateGeneration)
        #expect(error.description.contains("/proc/switchboard-cannot-exist"))
    }
}
