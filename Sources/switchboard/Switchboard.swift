import ArgumentParser
import Foundation

/// `switchboard`: the chat relay. `serve` is the default subcommand.
@main
struct Switchboard: ParsableCommand {
    /// The release, printed by `switchboard --version` (semantic versioning: the wire protocol of
    /// docs/protocol.md is version 1 throughout 0.x).
    static let version = "0.2.0"

    static let configuration = CommandConfiguration(
        abstract: "A self-hosted real-time chat relay: WebSocket rooms, presence and stored history.",
        version: Switchboard.version,
        subcommands: [Serve.self, Cert.self, Health.self],
        defaultSubcommand: Serve.self
    )

    /// Parses and runs. A bad flag or value exits 2 with a message naming it (scripts and
    /// containers rely on that code); a server that cannot start exits 1; help exits 0.
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch let error as ConfigurationError {
            FileHandle.standardError.write(Data("switchboard: \(error)\n".utf8))
            Foundation.exit(2)
        } catch let error as RuntimeError {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            Foundation.exit(1)
        } catch {
            if exitCode(for: error) == .success { exit(withError: error) }
            FileHandle.standardError.write(Data("\(fullMessage(for: error))\n".utf8))
            Foundation.exit(2)
        }
    }
}

/// A failure after the command line was understood: the server could not start.
struct RuntimeError: Error, CustomStringConvertible {
    let description: String
}
