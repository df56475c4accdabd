/// Where a cluster's Redis is, parsed from the `redis` setting:
/// `redis://[user:password@]host[:port][/db]`.
///
/// The port defaults to 6379 and the database to 0. A user without a password is refused
/// (Redis's `AUTH` takes a password, with or without a user); `redis://:password@host` is the
/// password alone, for a server with `requirepass`. An IPv6 host is written in brackets.
public struct RedisURL: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var user: String?
    public var password: String?
    public var database: Int

    public init(host: String, port: Int = 6379, user: String? = nil, password: String? = nil, database: Int = 0) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
    }

    /// Parses `text`; nil when it is not a `redis://` URL of that shape.
    public init?(_ text: String) {
        guard text.hasPrefix("redis://") else { return nil }
        var rest = Substring(text.dropFirst("redis://".count))
        var database = 0
        if let slash = rest.firstIndex(of: "/") {
            let path = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
            if !path.isEmpty {
                guard let number = Int(path), (0...1_000_000).contains(number) else { return nil }
                database = number
            }
        }
        var user: String?
        var password: String?
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            rest = rest[rest.index(after: at)...]
            guard let colon = credentials.firstIndex(of: ":") else { return nil }
            let name = credentials[..<colon]
            let secret = credentials[credentials.index(after: colon)...]
            guard !secret.isEmpty else { return nil }
            user = name.isEmpty ? nil : String(name)
            password = String(secret)
        }
        var host: Substring
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return nil }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return nil }
                portText = after.dropFirst()
            }
        } else if let colon = rest.firstIndex(of: ":") {
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        } else {
            host = rest
        }
        guard !host.isEmpty, !host.contains(where: { $0 == " " || $0 == "/" || $0 == "@" }) else { return nil }
        var port = 6379
        if let portText {
            guard let number = Int(portText), (1...65535).contains(number) else { return nil }
            port = number
        }
        self.init(host: String(host), port: port, user: user, password: password, database: database)
    }

    /// The URL without its password, for log lines.
    public var description: String {
        let credentials = password == nil ? "" : "\(user ?? ""):***@"
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "redis://\(credentials)\(shownHost):\(port)/\(database)"
    }
}
