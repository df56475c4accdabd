import ArgumentParser
import Foundation
import Posix
import TLS

/// `switchboard cert --self-signed --out DIR`: a development certificate for localhost.
struct Cert: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a self-signed development certificate and key for localhost.")

    @Flag(help: "Make a self-signed certificate (the only kind this command makes).")
    var selfSigned = false
    @Option(help: "Folder to write cert.pem and key.pem into.")
    var out: String
    @Option(help: "Common name of the certificate.")
    var commonName = "localhost"

    func validate() throws {
        guard selfSigned else { throw ValidationError("say --self-signed: it is the only kind of certificate this command makes") }
    }

    func run() throws {
        let certificatePath = out + "/cert.pem"
        let keyPath = out + "/key.pem"
        do {
            let pair = try SelfSignedCertificate.generate(commonName: commonName)
            try FileSystem.makeDirectories(out, mode: 0o755)
            try FileSystem.writeFile(pair.keyPEM, to: keyPath, mode: 0o600)
            try FileSystem.writeFile(pair.certificatePEM, to: certificatePath, mode: 0o644)
        } catch {
            throw RuntimeError(description: "switchboard: \(error)")
        }
        FileHandle.standardOutput.write(Data("""
            wrote \(certificatePath) and \(keyPath) (for localhost, 127.0.0.1 and ::1; valid 365 days)
            run: switchboard --tls-cert \(certificatePath) --tls-key \(keyPath)

            """.utf8))
    }
}
