import ArgumentParser
import Foundation
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
        do {
            let files = try SelfSignedCertificate.write(toDirectory: out, commonName: commonName)
            FileHandle.standardOutput.write(Data("""
                wrote \(files.certificatePath) and \(files.keyPath) (for localhost, 127.0.0.1 and ::1; valid 365 days)
                run: switchboard --tls-cert \(files.certificatePath) --tls-key \(files.keyPath)

                """.utf8))
        } catch {
            throw RuntimeError(description: "switchboard: \(error)")
        }
    }
}
