import Glibc
import Testing
import TLS

/// Loads a context and returns the error it throws, or nil when it loads.
private func loadError(certificate: String, key: String) -> TLSError? {
    do {
        _ = try TLSContext(certificateChainPath: certificate, privateKeyPath: key)
        return nil
    } catch {
        return error
    }
}

/// Writes text to a new file in a fresh directory and returns its path.
private func writeFile(named name: String, _ text: String) -> String {
    let path = Fixture.temporaryDirectory() + "/" + name
    let file = fopen(path, "w")
    fputs(text, file)
    fclose(file)
    return path
}

@Test func loadsTheDevelopmentCertificate() {
    #expect(loadError(certificate: Fixture.certificate.certificatePath, key: Fixture.certificate.keyPath) == nil)
}

@Test func missingCertificateFileIsNamedWithTheReason() throws {
    let missing = "/nonexistent-switchboard/cert.pem"
    let error = try #require(loadError(certificate: missing, key: Fixture.certificate.keyPath))
    #expect(error.kind == .certificateChain)
    #expect(error.description.contains(missing))
    #expect(error.description.contains("No such file"))
}

@Test func missingKeyFileIsNamedWithTheReason() throws {
    let missing = "/nonexistent-switchboard/key.pem"
    let error = try #require(loadError(certificate: Fixture.certificate.certificatePath, key: missing))
    #expect(error.kind == .privateKey)
    #expect(error.description.contains(missing))
    #expect(error.description.contains("No such file"))
}

@Test func mismatchedKeyNamesBothFilesAndTheReason() throws {
    let other = try Fixture.writeCertificate(toDirectory: Fixture.temporaryDirectory())
    let certificate = Fixture.certificate.certificatePath
    let error = try #require(loadError(certificate: certificate, key: other.keyPath))
    #expect(error.kind == .keyMismatch)
    #expect(error.description.contains(certificate))
    #expect(error.description.contains(other.keyPath))
    #expect(error.description.contains("key values mismatch"))
}

@Test func nonPEMFilesAreRejected() throws {
    let junk = writeFile(named: "junk.pem", "this is not PEM\n")
    let certificateError = try #require(loadError(certificate: junk, key: Fixture.certificate.keyPath))
    #expect(certificateError.kind == .certificateChain)
    #expect(certificateError.description.contains(junk))
    #expect(!certificateError.reasons.isEmpty)
    let keyError = try #require(loadError(certificate: Fixture.certificate.certificatePath, key: junk))
    #expect(keyError.kind == .privateKey)
    #expect(keyError.description.contains(junk))
}
