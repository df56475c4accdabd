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

@Test func generatedPairLoadsIntoAContext() throws {
    let directory = Fixture.temporaryDirectory()
    let paths = try Fixture.writeCertificate(toDirectory: directory)
    _ = try TLSContext(certificateChainPath: paths.certificatePath, privateKeyPath: paths.keyPath)
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
