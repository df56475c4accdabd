import Testing

@testable import HTTP

@Test func lookupIgnoresASCIICase() {
    let headers: HTTPHeaders = ["Sec-WebSocket-Key": "abc", "upgrade": "websocket"]
    #expect(headers["sec-websocket-key"] == "abc")
    #expect(headers["SEC-WEBSOCKET-KEY"] == "abc")
    #expect(headers["Upgrade"] == "websocket")
    #expect(headers["Sec-WebSocket-Ke"] == nil)
    #expect(headers["Sec-WebSocket-Keys"] == nil)
}

@Test func repeatedFieldsKeepEveryValueInOrder() {
    var headers = HTTPHeaders()
    headers.add("Sec-WebSocket-Extensions", "permessage-deflate")
    headers.add("Host", "a")
    headers.add("sec-websocket-extensions", "x-other")
    #expect(headers["Sec-WebSocket-Extensions"] == "permessage-deflate")
    #expect(headers.values("SEC-WEBSOCKET-EXTENSIONS") == ["permessage-deflate", "x-other"])
    #expect(headers.values("Missing") == [])
    #expect(headers.map(\.name) == ["Sec-WebSocket-Extensions", "Host", "sec-websocket-extensions"])
}

@Test func containsTokenFindsCommaSeparatedTokens() {
    let headers: HTTPHeaders = ["Connection": "keep-alive, Upgrade", "Upgrade": "WebSocket"]
    #expect(headers.containsToken("upgrade", in: "connection"))
    #expect(headers.containsToken("Keep-Alive", in: "Connection"))
    #expect(headers.containsToken("websocket", in: "Upgrade"))
    #expect(!headers.containsToken("close", in: "Connection"))
    #expect(!headers.containsToken("Upgrad", in: "Connection"))
    #expect(!headers.containsToken("keep-alive, Upgrade", in: "Connection"))
    #expect(!headers.containsToken("upgrade", in: "Missing"))
}

@Test func containsTokenLooksAtEveryLineAndTrimsWhitespace() {
    var headers = HTTPHeaders()
    headers.add("Connection", "keep-alive")
    headers.add("connection", " \t,Upgrade\t ,")
    #expect(headers.containsToken("upgrade", in: "Connection"))
    #expect(!headers.containsToken("", in: "Connection"))
}

@Test func replaceOrAddLeavesOneField() {
    var headers: HTTPHeaders = ["Content-Type": "text/plain", "X": "1", "content-type": "text/html"]
    headers.replaceOrAdd("CONTENT-TYPE", "application/json")
    #expect(headers.values("Content-Type") == ["application/json"])
    #expect(headers.count == 2)
    headers.remove("x")
    #expect(!headers.contains("X"))
}

@Test func equalityComparesOrderAndExactNames() {
    let one: HTTPHeaders = ["A": "1", "B": "2"]
    #expect(one == HTTPHeaders([("A", "1"), ("B", "2")]))
    #expect(one != HTTPHeaders([("B", "2"), ("A", "1")]))
    #expect(one != HTTPHeaders([("a", "1"), ("B", "2")]))
}
