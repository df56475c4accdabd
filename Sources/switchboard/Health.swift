import ArgumentParser
import Foundation
import Posix

/// `switchboard health [--url URL]`: exits 0 when a running server's `/healthz` answers ok.
///
/// The container image's `HEALTHCHECK`, a systemd unit or a script can probe the server with the
/// binary alone, where curl or wget may not be installed. One blocking HTTP/1.1 `GET` with
/// `Connection: close`, bounded by `--timeout`; anything but `200` with `{"status":"ok"}` exits 1.
struct Health: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Exit 0 when a running server's /healthz answers ok, 1 when not.")

    @Option(help: "URL to ask (default http://127.0.0.1:PORT/healthz, PORT from the configuration).")
    var url: String?
    @Option(help: "Configuration file to read the port from (default Config/switchboard.json when present).")
    var config: String?
    @Option(help: "Seconds allowed for connecting and for each read.")
    var timeout = 5

    func validate() throws {
        guard timeout >= 1 else { throw ValidationError("--timeout must be at least 1 second") }
        if let url, HealthURL(url) == nil {
            throw ValidationError("--url must look like http://HOST[:PORT][/PATH], not '\(url)'")
        }
    }

    func run() throws {
        let target = try url.flatMap(HealthURL.init) ?? configuredURL()
        let answer: [UInt8]
        do {
            let socket = try BlockingSocket.connect(host: target.host, port: target.port, timeoutSeconds: timeout)
            try socket.write(Array(target.request.utf8))
            answer = try socket.readToEnd(limit: 64 * 1024)
        } catch {
            throw RuntimeError(description: "switchboard health: \(target): \(error)")
        }
        if let problem = Health.problem(in: answer) {
            throw RuntimeError(description: "switchboard health: \(target): \(problem)")
        }
        FileHandle.standardOutput.write(Data("switchboard health: \(target): ok\n".utf8))
    }

    /// The plain listener on loopback, as the file and the `SWITCHBOARD_*` environment the
    /// server would read configure it (so a container's health check follows its port setting).
    private func configuredURL() throws -> HealthURL {
        let options = try ConfigurationLoader.load(
            file: config, environment: ProcessInfo.processInfo.environment, flags: [:])
        let port = options.server.port
        guard port != 0 else {
            throw RuntimeError(description: "switchboard health: the configured port is 0 (chosen at start): pass --url")
        }
        let host: String
        switch options.server.host {
        case "0.0.0.0": host = "127.0.0.1"
        case "::": host = "::1"
        case let configured: host = configured
        }
        return HealthURL(host: host, port: port, path: "/healthz")
    }

    /// Why `answer` is not a healthy one, or nil when it is: status 200 and a JSON body whose
    /// `status` is `ok`.
    static func problem(in answer: [UInt8]) -> String? {
        let text = String(decoding: answer, as: UTF8.self)
        guard let headEnd = text.range(of: "\r\n\r\n") else {
            return answer.isEmpty ? "the server closed without answering" : "the answer is not HTTP"
        }
        // "\r\n" is one Character in Swift, so the head splits on it whole.
        let statusLine = text[..<headEnd.lowerBound].split(separator: "\r\n").first ?? ""
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1] == "200" else {
            return "answered '\(statusLine)'"
        }
        let body = Data(text[headEnd.upperBound...].utf8)
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
              object["status"] as? String == "ok" else {
            return "answered 200 without {\"status\":\"ok\"}"
        }
        return nil
    }
}
