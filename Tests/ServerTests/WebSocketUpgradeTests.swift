import HTTP
import Testing
@testable import Server

private func head(_ headers: [(String, String)], version: HTTPVersion = .http1_1) -> HTTPRequestHead {
    var head = HTTPRequestHead(method: "GET", target: "/echo", path: "/echo")
    head.version = version
    head.headers = HTTPHeaders(headers)
    return head
}

private let valid: [(String, String)] = [
    ("Host", "example.com:8080"), ("Upgrade", "websocket"), ("Connection", "keep-alive, Upgrade"),
    ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="), ("Sec-WebSocket-Version", "13"),
]

private func status(_ outcome: WebSocketUpgrade.Outcome) -> Int {
    switch outcome {
    case .accept(let response), .refuse(let response): response.status.code
    }
}

@Test func validUpgradeGets101WithTheAcceptKey() {
    guard case .accept(let response) = WebSocketUpgrade.evaluate(head(valid), allowedOrigins: []) else {
        Issue.record("refused a valid upgrade")
        return
    }
    #expect(response.status.code == 101)
    #expect(response.headers["Sec-WebSocket-Accept"] == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
}

@Test func missingUpgradeHeaderGets426() {
    #expect(status(WebSocketUpgrade.evaluate(head(valid.filter { $0.0 != "Upgrade" }), allowedOrigins: [])) == 426)
}

@Test func otherVersionsGet426AndBadKeys400() {
    let version8 = valid.map { $0.0 == "Sec-WebSocket-Version" ? ($0.0, "8") : $0 }
    #expect(status(WebSocketUpgrade.evaluate(head(version8), allowedOrigins: [])) == 426)
    let badKey = valid.map { $0.0 == "Sec-WebSocket-Key" ? ($0.0, "short") : $0 }
    #expect(status(WebSocketUpgrade.evaluate(head(badKey), allowedOrigins: [])) == 400)
    #expect(status(WebSocketUpgrade.evaluate(head(valid, version: .http1_0), allowedOrigins: [])) == 400)
}

@Test func originsAreCheckedAgainstTheHostAndTheList() {
    #expect(WebSocketUpgrade.isAllowed(origin: "http://example.com:8080", host: "example.com:8080", allowed: []))
    #expect(WebSocketUpgrade.isAllowed(origin: "HTTPS://Example.com:8080", host: "example.com:8080", allowed: []))
    #expect(!WebSocketUpgrade.isAllowed(origin: "https://evil.example", host: "example.com:8080", allowed: []))
    #expect(WebSocketUpgrade.isAllowed(origin: "https://app.example", host: "x", allowed: ["https://app.example"]))
    #expect(WebSocketUpgrade.isAllowed(origin: "https://any.example", host: "x", allowed: ["*"]))
    let foreign = valid + [("Origin", "https://evil.example")]
    #expect(status(WebSocketUpgrade.evaluate(head(foreign), allowedOrigins: [])) == 403)
}
