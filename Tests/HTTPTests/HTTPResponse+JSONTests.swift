import Testing

@testable import HTTP

private func text(_ bytes: [UInt8]) -> String {
    String(decoding: bytes, as: UTF8.self)
}

@Test func errorBodyFollowsTheProtocolShape() {
    let response = HTTPResponse.error(.notFound, code: "not_found", message: "No such path.")
    #expect(response.status == .notFound)
    #expect(response.headers["content-type"] == "application/json")
    #expect(response.headers["x-content-type-options"] == "nosniff")
    #expect(text(response.body) == #"{"error":"not_found","message":"No such path."}"#)
}

@Test func errorEscapesQuotesBackslashesAndControlCharacters() {
    let message = "say \"hi\" \\ path\n\r\t\u{08}\u{0C}\u{00}\u{1F}\u{7F} é"
    let response = HTTPResponse.error(.badRequest, code: "bad\"code", message: message)
    #expect(text(response.body)
        == #"{"error":"bad\"code","message":"say \"hi\" \\ path\n\r\t\b\f\u0000\u001f"# + "\u{7F} é\"}")
}

@Test func errorSerializesWithItsLength() {
    let bytes = HTTPResponse.error(.upgradeRequired, code: "upgrade_required", message: "Use WebSocket.")
        .serialize(keepAlive: true)
    let body = #"{"error":"upgrade_required","message":"Use WebSocket."}"#
    #expect(text(bytes)
        == "HTTP/1.1 426 Upgrade Required\r\nContent-Type: application/json\r\nX-Content-Type-Options: nosniff\r\n"
        + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)")
}

@Test func jsonSetsContentTypeAndKeepsTheBody() {
    let response = HTTPResponse.json(.ok, body: #"{"status":"ok"}"#)
    #expect(response.headers.values("Content-Type") == ["application/json"])
    #expect(response.headers.values("X-Content-Type-Options") == ["nosniff"])
    #expect(text(response.body) == #"{"status":"ok"}"#)
}
