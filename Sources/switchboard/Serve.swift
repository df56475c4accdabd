import ArgumentParser
import Foundation
import Logging
import Posix
import Server
import TLS

/// `switchboard serve`: runs the server until SIGTERM or SIGINT.
struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the server (the default).")

    @Option(help: "Configuration file (default Config/switchboard.json when present).")
    var config: String?
    @Option(help: "Address of the plain listener (default 0.0.0.0).")
    var host: String?
    @Option(help: "Port of the plain listener (default 8080; 0 picks a free port).")
    var port: String?
    @Option(help: "Port of the TLS listener (default 8443; on when --tls-cert and --tls-key are given).")
    var tlsPort: String?
    @Option(help: "TLS certificate chain (PEM).")
    var tlsCert: String?
    @Option(help: "TLS private key (PEM).")
    var tlsKey: String?
    @Option(help: "Data folder (default ./data).")
    var data: String?
    @Option(help: "fsync (default) or none.")
    var durability: String?
    @Option(help: "Seconds of silence before a connection is dropped (default 60).")
    var idleTimeout: String?
    @Option(help: "Seconds of silence before the server pings (default 25).")
    var pingInterval: String?
    @Option(help: "The cluster's Redis, redis://[user:password@]host:port/db (default: none, a single node).")
    var redis: String?
    @Option(help: "trace, debug, info (default), notice, warning, error, critical.")
    var logLevel: String?

    func run() throws {
        ProcessMemory.restartWithThreadCache()
        ProcessSignals.prepare()
        ProcessMemory.prepare()
        let options = try ConfigurationLoader.load(
            file: config, environment: ProcessInfo.processInfo.environment, flags: flags)
        let logger = Serve.makeLogger(level: options.logLevel)
        let configuration = options.server
        var context: TLSContext?
        if let certificate = configuration.tlsCertificatePath, let key = configuration.tlsKeyPath {
            do {
                context = try TLSContext(certificateChainPath: certificate, privateKeyPath: key)
            } catch {
                throw RuntimeError(description: "switchboard: TLS: \(error)")
            }
        }
        let server: Server
        let urls: [String]
        do {
            server = try Server(configuration: configuration, logger: logger)
            urls = try server.start(tls: context)
        } catch let error as WebhookError {
            // A webhook setting that cannot work (no `webhookSecret`): a bad value, exit 2.
            throw ConfigurationError(description: "\(error)")
        } catch {
            throw RuntimeError(description: "switchboard: cannot start: \(error)")
        }
        // Unbuffered, so a script reading the port sees the lines at once.
        FileHandle.standardOutput.write(Data(urls.map { "listening on \($0)\n" }.joined().utf8))
        logger.info("switchboard started", metadata: ["tls": "\(context != nil ? "on" : "off")"])
        if let redis = configuration.redis {
            logger.info("cluster mode", metadata: ["node": "\(server.nodeId)", "redis": "\(redis)"])
        }
        try server.run()
        logger.info("switchboard stopped")
    }

    /// The flags given, by setting key.
    private var flags: [String: String] {
        var flags: [String: String] = [:]
        flags["host"] = host
        flags["port"] = port
        flags["tlsPort"] = tlsPort
        flags["tlsCert"] = tlsCert
        flags["tlsKey"] = tlsKey
        flags["data"] = data
        flags["durability"] = durability
        flags["idleTimeout"] = idleTimeout
        flags["pingInterval"] = pingInterval
        flags["logLevel"] = logLevel
        flags["redis"] = redis
        return flags
    }

    static func makeLogger(level: String) -> Logger {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = Logger.Level(rawValue: level) ?? .info
            return handler
        }
        return Logger(label: "switchboard")
    }
}
