import HTTP
import WebSocket

/// Checks an opening handshake (RFC 6455 §4.2.1) and builds the `101` answer.
///
/// Pure: the connection decides what to do with the result.
enum WebSocketUpgrade {
    enum Outcome {
        case accept(HTTPResponse)
        case refuse(HTTPResponse)
    }

    static func evaluate(_ head: HTTPRequestHead, allowedOrigins: [String]) -> Outcome {
        let headers = head.headers
        guard headers.containsToken("websocket", in: "Upgrade") else {
            var response = HTTPResponse.error(
                .upgradeRequired, code: "upgrade_required",
                message: "this path speaks WebSocket only: connect with a WebSocket client")
            response.headers.add("Upgrade", "websocket")
            response.headers.add("Sec-WebSocket-Version", "13")
            return .refuse(response)
        }
        guard headers.containsToken("upgrade", in: "Connection"), headers["Host"] != nil,
              head.version.major == 1, head.version.minor >= 1
        else {
            return .refuse(.error(.badRequest, code: "bad_request",
                                  message: "a WebSocket upgrade needs HTTP/1.1, Host, Connection: Upgrade"))
        }
        guard headers["Sec-WebSocket-Version"]?.trimmingSpaces == "13" else {
            var response = HTTPResponse.error(
                .upgradeRequired, code: "upgrade_required", message: "only WebSocket version 13 is supported")
            response.headers.add("Sec-WebSocket-Version", "13")
            return .refuse(response)
        }
        guard let key = headers["Sec-WebSocket-Key"]?.trimmingSpaces, WebSocketHandshake.isValidKey(key) else {
            return .refuse(.error(.badRequest, code: "bad_request",
                                  message: "Sec-WebSocket-Key must be 16 bytes in base64"))
        }
        if let origin = headers["Origin"], !isAllowed(origin: origin, host: headers["Host"] ?? "", allowed: allowedOrigins) {
            return .refuse(.error(.forbidden, code: "forbidden", message: "origin \(origin) is not allowed"))
        }
        var response = HTTPResponse(status: .switchingProtocols)
        response.headers.add("Upgrade", "websocket")
        response.headers.add("Connection", "Upgrade")
        response.headers.add("Sec-WebSocket-Accept", WebSocketHandshake.acceptKey(for: key))
        return .accept(response)
    }

    /// Same-origin pages (the page this server serves) are always allowed; others only when
    /// listed, or when the list holds `*`. Cross-site WebSocket hijacking is what this stops.
    static func isAllowed(origin: String, host: String, allowed: [String]) -> Bool {
        if allowed.contains("*") || allowed.contains(origin) { return true }
        let lowered = origin.asciiLowercased
        for scheme in ["http://", "https://"] where lowered.hasPrefix(scheme) {
            return lowered.dropFirst(scheme.count) == host.asciiLowercased[...]
        }
        return false
    }
}

extension String {
    var trimmingSpaces: String {
        var view = Substring(self)
        while view.first == " " || view.first == "\t" { view.removeFirst() }
        while view.last == " " || view.last == "\t" { view.removeLast() }
        return String(view)
    }
}
