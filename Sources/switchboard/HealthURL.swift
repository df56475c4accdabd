/// An `http://HOST[:PORT][/PATH]` URL, the only kind `health` asks (the plain listener is always
/// on, and TLS would add nothing to a liveness probe).
struct HealthURL: CustomStringConvertible {
    let host: String
    let port: Int
    let path: String

    init(host: String, port: Int, path: String) {
        self.host = host
        self.port = port
        self.path = path
    }

    /// Parses `http://127.0.0.1:8080/healthz`, `http://[::1]:8080`, `http://localhost`; a URL
    /// without a path asks `/healthz`.
    init?(_ text: String) {
        guard text.hasPrefix("http://") else { return nil }
        let rest = text.dropFirst("http://".count)
        let authority = rest.prefix { $0 != "/" }
        let path = rest.dropFirst(authority.count)
        var host = Substring(authority)
        var port = 80
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return nil }
            let after = host[host.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let number = Int(after.dropFirst()) else { return nil }
                port = number
            }
            host = host[host.index(after: host.startIndex)..<close]
        } else if let colon = host.lastIndex(of: ":") {
            guard let number = Int(host[host.index(after: colon)...]) else { return nil }
            port = number
            host = host[..<colon]
        }
        guard !host.isEmpty, (1...65535).contains(port) else { return nil }
        self.init(host: String(host), port: port, path: path.isEmpty ? "/healthz" : String(path))
    }

    var request: String {
        let authority = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        return "GET \(path) HTTP/1.1\r\nHost: \(authority)\r\nConnection: close\r\n\r\n"
    }

    var description: String {
        host.contains(":") ? "http://[\(host)]:\(port)\(path)" : "http://\(host):\(port)\(path)"
    }
}
