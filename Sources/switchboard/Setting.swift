import Redis
import Server

/// One configuration setting: its name in the file, its environment variable, and how a
/// value is checked and applied.
struct Setting: Sendable {
    /// The key in `Config/switchboard.json`, e.g. `idleTimeout`.
    let key: String
    /// What the setting accepts, for error messages.
    let accepts: String
    let apply: @Sendable (inout Options, String) -> Bool
    /// A refused value is not repeated in the error: it is a secret, or may hold one.
    var hidesValue = false

    /// `SWITCHBOARD_IDLE_TIMEOUT` for `idleTimeout`.
    var environmentName: String {
        var name = "SWITCHBOARD_"
        for character in key {
            if character.isUppercase { name += "_" }
            name += character.uppercased()
        }
        return name
    }
}

/// Everything the executable configures: the server's settings plus its own.
struct Options: Sendable {
    var server = ServerConfiguration()
    var logLevel = "info"
}

extension Setting {
    static func text(_ key: String, _ path: WritableKeyPath<ServerConfiguration, String> & Sendable) -> Setting {
        Setting(key: key, accepts: "a string") { options, value in
            options.server[keyPath: path] = value
            return true
        }
    }

    static func optionalText(_ key: String, _ path: WritableKeyPath<ServerConfiguration, String?> & Sendable) -> Setting {
        Setting(key: key, accepts: "a string or null") { options, value in
            options.server[keyPath: path] = value.isEmpty ? nil : value
            return true
        }
    }

    /// A secret: null (none, or generated where the server can), or at least 32 bytes, so it
    /// cannot be guessed or brute-forced.
    static func secret(_ key: String, _ path: WritableKeyPath<ServerConfiguration, String?> & Sendable) -> Setting {
        Setting(key: key, accepts: "null or a secret of at least 32 bytes", apply: { options, value in
            guard value.isEmpty || value.utf8.count >= 32 else { return false }
            options.server[keyPath: path] = value.isEmpty ? nil : value
            return true
        }, hidesValue: true)
    }

    static func integer(_ key: String, _ path: WritableKeyPath<ServerConfiguration, Int> & Sendable, _ range: ClosedRange<Int>) -> Setting {
        Setting(key: key, accepts: "a whole number from \(range.lowerBound) to \(range.upperBound)") { options, value in
            guard let number = Int(value), range.contains(number) else { return false }
            options.server[keyPath: path] = number
            return true
        }
    }

    static func seconds(_ key: String, _ path: WritableKeyPath<ServerConfiguration, Double> & Sendable) -> Setting {
        Setting(key: key, accepts: "a number of seconds from 0.1 to 86400") { options, value in
            guard let number = Double(value), number >= 0.1, number <= 86400 else { return false }
            options.server[keyPath: path] = number
            return true
        }
    }

    static func flag(_ key: String, _ path: WritableKeyPath<ServerConfiguration, Bool> & Sendable) -> Setting {
        Setting(key: key, accepts: "true or false") { options, value in
            switch value {
            case "true", "1", "yes", "on": options.server[keyPath: path] = true
            case "false", "0", "no", "off": options.server[keyPath: path] = false
            default: return false
            }
            return true
        }
    }

    static func list(_ key: String, _ path: WritableKeyPath<ServerConfiguration, [String]> & Sendable) -> Setting {
        Setting(key: key, accepts: "a list of strings (comma-separated in flags and environment)") { options, value in
            options.server[keyPath: path] = value.split(separator: ",").map { String($0).trimmed }.filter { !$0.isEmpty }
            return true
        }
    }

    static func webhook(_ key: String, _ path: WritableKeyPath<ServerConfiguration, String?> & Sendable) -> Setting {
        Setting(key: key, accepts: "an http://host[:port]/path URL or null") { options, value in
            guard value.isEmpty || WebhookTarget(value) != nil else { return false }
            options.server[keyPath: path] = value.isEmpty ? nil : value
            return true
        }
    }

    static func redis(_ key: String, _ path: WritableKeyPath<ServerConfiguration, RedisURL?> & Sendable) -> Setting {
        Setting(key: key, accepts: "a redis://[user:password@]host[:port][/db] URL or null", apply: { options, value in
            guard value.isEmpty || RedisURL(value) != nil else { return false }
            options.server[keyPath: path] = value.isEmpty ? nil : RedisURL(value)
            return true
        }, hidesValue: true)
    }

    /// A node's name: null (generated at start), or 1 to 64 characters of `A-Za-z0-9._-`, so
    /// it fits in Redis keys and log lines as it is.
    static func nodeName(_ key: String, _ path: WritableKeyPath<ServerConfiguration, String?> & Sendable) -> Setting {
        Setting(key: key, accepts: "null or 1 to 64 characters of A-Z a-z 0-9 . _ -") { options, value in
            let allowed = value.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                     UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                    true
                default:
                    false
                }
            }
            guard value.utf8.count <= 64, allowed else { return false }
            options.server[keyPath: path] = value.isEmpty ? nil : value
            return true
        }
    }

    static func choice(_ key: String, _ choices: [String], _ apply: @escaping @Sendable (inout Options, String) -> Void) -> Setting {
        Setting(key: key, accepts: "one of \(choices.joined(separator: ", "))") { options, value in
            guard choices.contains(value) else { return false }
            apply(&options, value)
            return true
        }
    }

    /// Every setting, in the order `Config/switchboard.json` lists them.
    static let all: [Setting] = [
        .text("host", \.host),
        .integer("port", \.port, 0...65535),
        .integer("tlsPort", \.tlsPort, 0...65535),
        .optionalText("tlsCert", \.tlsCertificatePath),
        .optionalText("tlsKey", \.tlsKeyPath),
        .text("data", \.dataDirectory),
        .choice("durability", ["fsync", "none"]) { $0.server.durability = $1 },
        .integer("threads", \.threads, 0...64),
        .integer("compactAfterBytes", \.compactAfterBytes, 4096...(1 << 40)),
        .integer("segmentBytes", \.segmentBytes, 4096...(1 << 30)),
        .integer("recentMessages", \.recentMessages, 0...1_000_000),
        .choice("logLevel", ["trace", "debug", "info", "notice", "warning", "error", "critical"]) { $0.logLevel = $1 },
        .flag("echo", \.echo),
        .list("allowedOrigins", \.allowedOrigins),
        .flag("allowSignup", \.allowSignup),
        .flag("allowAnonymousRooms", \.allowAnonymousRooms),
        .secret("adminToken", \.adminToken),
        .webhook("presenceWebhook", \.presenceWebhook),
        .webhook("offlineWebhook", \.offlineWebhook),
        .secret("webhookSecret", \.webhookSecret),
        .integer("webhookQueueLimit", \.webhookQueueLimit, 1...10_000_000),
        .secret("authSecret", \.authSecret),
        .integer("tokenLifetime", \.tokenLifetime, 1...(10 * 366 * 86400)),
        .flag("compression", \.deflate.isEnabled),
        .integer("compressionThreshold", \.deflate.threshold, 0...(64 << 20)),
        .integer("compressionLevel", \.deflate.compressionLevel, 0...9),
        .integer("compressionMemoryLevel", \.deflate.memoryLevel, 1...9),
        .integer("compressionWindowBits", \.deflate.maxWindowBits, 9...15),
        .flag("compressionContextTakeover", \.deflate.serverContextTakeover),
        .flag("compressionClientContextTakeover", \.deflate.clientContextTakeover),
        .integer("maxMessageSize", \.maxMessageSize, 125...(64 << 20)),
        .integer("maxConnections", \.maxConnections, 1...10_000_000),
        .integer("maxConnectionsPerAddress", \.maxConnectionsPerAddress, 0...10_000_000),
        .integer("maxRequestsPerConnection", \.maxRequestsPerConnection, 1...1_000_000),
        .integer("outboundQueueBytes", \.outboundQueueBytes, 4096...(1 << 30)),
        .integer("messagesPerSecond", \.messagesPerSecond, 1...1_000_000),
        .integer("roomMessagesPerSecond", \.roomMessagesPerSecond, 1...1_000_000),
        .integer("roomBytesPerSecond", \.roomBytesPerSecond, 1024...(1 << 40)),
        .integer("userMessagesPerSecond", \.userMessagesPerSecond, 1...1_000_000),
        .integer("signupsPerHour", \.signupsPerHour, 1...1_000_000),
        .integer("groupsPerHour", \.groupsPerHour, 1...1_000_000),
        .integer("retentionMessages", \.retentionMessages, 0...(1 << 40)),
        .integer("retentionDays", \.retentionDays, 0...100_000),
        .integer("maxUploadBytes", \.maxUploadBytes, 1...(1 << 30)),
        .integer("mediaQuotaBytes", \.mediaQuotaBytes, 0...(1 << 50)),
        .integer("uploadsPerMinute", \.uploadsPerMinute, 1...1_000_000),
        .seconds("uploadTimeout", \.uploadTimeout),
        .seconds("handshakeTimeout", \.handshakeTimeout),
        .seconds("idleTimeout", \.idleTimeout),
        .seconds("pingInterval", \.pingInterval),
        .seconds("heartbeatInterval", \.heartbeatInterval),
        .text("public", \.publicDirectory),
        .redis("redis", \.redis),
        .nodeName("nodeId", \.nodeId),
        .seconds("nodeTimeout", \.nodeTimeout),
        .integer("snapshotEntries", \.snapshotEntries, 10...1_000_000_000),
    ]

    static func named(_ key: String) -> Setting? {
        all.first { $0.key == key }
    }
}

extension String {
    var trimmed: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
