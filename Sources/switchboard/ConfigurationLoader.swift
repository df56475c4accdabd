import Foundation
import Server

/// A setting with a value it does not accept, or a configuration file that cannot be read.
struct ConfigurationError: Error, CustomStringConvertible {
    let description: String
}

/// Builds the options from the layers, lowest first: defaults, the config file, the
/// environment (`SWITCHBOARD_*`), then command-line flags.
enum ConfigurationLoader {
    static let defaultFile = "Config/switchboard.json"

    static func load(file: String?, environment: [String: String], flags: [String: String]) throws -> Options {
        var options = Options()
        let path = file ?? (FileManager.default.fileExists(atPath: defaultFile) ? defaultFile : nil)
        if let path {
            for (key, value) in try fileValues(path) {
                try apply(key, value, from: "\(path)", to: &options)
            }
        }
        for setting in Setting.all {
            if let value = environment[setting.environmentName] {
                try apply(setting.key, value, from: "environment variable \(setting.environmentName)", to: &options)
            }
        }
        for (key, value) in flags.sorted(by: { $0.key < $1.key }) {
            try apply(key, value, from: "command line", to: &options)
        }
        try checkTogether(options.server)
        return options
    }

    /// A certificate means something only with its key: one without the other is a mistake to
    /// name at the start, not TLS silently off. (A webhook without `webhookSecret` is the
    /// server's own check, `WebhookError`, which `serve` reports the same way.)
    private static func checkTogether(_ server: ServerConfiguration) throws {
        if (server.tlsCertificatePath == nil) != (server.tlsKeyPath == nil) {
            throw ConfigurationError(description: "tlsCert and tlsKey go together: set both for wss://, or neither")
        }
    }

    private static func apply(_ key: String, _ value: String, from source: String, to options: inout Options) throws {
        guard let setting = Setting.named(key) else {
            throw ConfigurationError(description: "\(source): unknown setting '\(key)'")
        }
        guard setting.apply(&options, value) else {
            let given = setting.hidesValue ? "the value given (not shown: it may hold a secret)" : "'\(value)'"
            throw ConfigurationError(description: "\(source): setting '\(key)' must be \(setting.accepts), not \(given)")
        }
    }

    /// The file's settings as strings, the form flags and environment variables use too.
    private static func fileValues(_ path: String) throws -> [(String, String)] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError(description: "cannot read configuration file \(path)")
        }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw ConfigurationError(description: "\(path) is not valid JSON: \(error.localizedDescription)")
        }
        guard let settings = object as? [String: Any] else {
            throw ConfigurationError(description: "\(path) must hold one JSON object of settings")
        }
        return try settings.sorted { $0.key < $1.key }.compactMap { key, value in
            switch value {
            case is NSNull:
                return (key, "")
            case let flag as Bool where !(value is Int) && !(value is Double):
                return (key, flag ? "true" : "false")
            case let number as NSNumber:
                return (key, number.stringValue)
            case let text as String:
                return (key, text)
            case let list as [String]:
                return (key, list.joined(separator: ","))
            default:
                throw ConfigurationError(description: "\(path): setting '\(key)' has a value of the wrong kind")
            }
        }
    }
}
