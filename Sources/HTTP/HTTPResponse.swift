import Bytes

/// A response to write back: status, header fields and a complete body.
///
/// Responses here are small and whole (errors, health, metrics, the static page, the `101` of an
/// upgrade), so the body is an array and `serialize` produces the exact bytes to queue. A response
/// streamed after its head (Server-Sent Events) sets `Transfer-Encoding` or `Content-Length` itself
/// and leaves `body` empty; `serialize` then adds no length of its own.
public struct HTTPResponse: Sendable {
    public var status: HTTPStatus
    public var headers: HTTPHeaders
    public var body: [UInt8]

    public init(status: HTTPStatus, headers: HTTPHeaders = .init(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The answer to a `HEAD` for this response: the same fields, `Content-Length` included,
    /// and no body (RFC 9110 §9.3.2).
    public func headResponse() -> HTTPResponse {
        var response = self
        if !status.forbidsBody && !headers.contains("Content-Length") && !headers.contains("Transfer-Encoding") {
            response.headers.add("Content-Length", String(body.count))
        }
        response.body = []
        return response
    }

    /// The status line, the fields, an empty line and the body, as sent on the wire.
    ///
    /// Adds `Content-Length` unless the status forbids a body (1xx, 204, 304) or the fields
    /// already frame the body; adds `Connection: close` when `keepAlive` is false so the client
    /// knows the server closes after this response (pass true for a `101`). Control characters
    /// in names and values are dropped, so a value built from request data can never end the
    /// line early and inject a field.
    public func serialize(keepAlive: Bool) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64 + body.count + headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 })
        out.append(contentsOf: "HTTP/1.1 \(status.code) ".utf8)
        Self.appendFieldText(status.reason, to: &out)
        out.append(contentsOf: [ASCII.carriageReturn, ASCII.lineFeed])
        for field in headers {
            Self.appendField(field.name, field.value, to: &out)
        }
        if !status.forbidsBody && !headers.contains("Content-Length") && !headers.contains("Transfer-Encoding") {
            Self.appendField("Content-Length", String(body.count), to: &out)
        }
        if !keepAlive && !headers.containsToken("close", in: "Connection") {
            Self.appendField("Connection", "close", to: &out)
        }
        out.append(contentsOf: [ASCII.carriageReturn, ASCII.lineFeed])
        out.append(contentsOf: body)
        return out
    }

    /// Appends `name: value` and CR LF.
    private static func appendField(_ name: String, _ value: String, to out: inout [UInt8]) {
        appendFieldText(name, to: &out)
        out.append(contentsOf: [ASCII.colon, ASCII.space])
        appendFieldText(value, to: &out)
        out.append(contentsOf: [ASCII.carriageReturn, ASCII.lineFeed])
    }

    /// Appends `text` without its control characters other than horizontal tab.
    private static func appendFieldText(_ text: String, to out: inout [UInt8]) {
        for byte in text.utf8 where HTTPGrammar.isFieldValueByte(byte) {
            out.append(byte)
        }
    }
}
