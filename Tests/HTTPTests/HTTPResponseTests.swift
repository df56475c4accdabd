import Testing

@testable import HTTP

private func text(_ bytes: [UInt8]) -> String {
    String(decoding: bytes, as: UTF8.self)
}

@Test func serializesStatusHeadersLengthAndBody() {
    let response = HTTPResponse(status: .ok, headers: ["Content-Type": "text/plain"], body: Array("hi".utf8))
    #expect(text(response.serialize(keepAlive: true))
        == "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nhi")
}

@Test func serializesConnectionCloseWhenNotKeepingAlive() {
    let response = HTTPResponse(status: .notFound)
    #expect(text(response.serialize(keepAlive: false))
        == "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
}

@Test func switchingProtocolsHasNoContentLength() {
    let response = HTTPResponse(status: .switchingProtocols, headers: [
        "Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Accept": "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=",
    ])
    #expect(text(response.serialize(keepAlive: true))
        == "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n")
}

@Test func bodilessStatusesGetNoContentLength() {
    #expect(text(HTTPResponse(status: .noContent).serialize(keepAlive: true)) == "HTTP/1.1 204 No Content\r\n\r\n")
    #expect(text(HTTPResponse(status: .notModified).serialize(keepAlive: true)) == "HTTP/1.1 304 Not Modified\r\n\r\n")
}

@Test func presetFramingIsNotDuplicated() {
    let streamed = HTTPResponse(status: .ok, headers: ["Content-Type": "text/event-stream", "Transfer-Encoding": "chunked"])
    #expect(text(streamed.serialize(keepAlive: true))
        == "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
    let presetLength = HTTPResponse(status: .ok, headers: ["content-length": "5"])
    #expect(text(presetLength.serialize(keepAlive: false))
        == "HTTP/1.1 200 OK\r\ncontent-length: 5\r\nConnection: close\r\n\r\n")
    let presetClose = HTTPResponse(status: .ok, headers: ["Connection": "close"])
    #expect(text(presetClose.serialize(keepAlive: false))
        == "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
}

@Test func controlCharactersCannotInjectHeaderLines() {
    let response = HTTPResponse(status: .ok, headers: ["X-Name": "a\r\nSet-Cookie: evil=1"])
    #expect(text(response.serialize(keepAlive: true))
        == "HTTP/1.1 200 OK\r\nX-Name: aSet-Cookie: evil=1\r\nContent-Length: 0\r\n\r\n")
}

@Test func largeBodyFollowsTheHeadWithItsLength() {
    let body = Array(repeating: UInt8(ascii: "z"), count: 1000)
    let bytes = HTTPResponse(status: .ok, body: body).serialize(keepAlive: true)
    let head = Array("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n".utf8)
    #expect(Array(bytes.prefix(head.count)) == head)
    #expect(Array(bytes.dropFirst(head.count)) == body)
}

@Test func headResponseKeepsTheLengthAndDropsTheBody() {
    let response = HTTPResponse(status: .ok, headers: ["Content-Type": "text/plain"], body: Array("hello".utf8))
    #expect(text(response.headResponse().serialize(keepAlive: true))
        == "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\n")
    #expect(HTTPResponse(status: .notModified).headResponse().serialize(keepAlive: true)
        == HTTPResponse(status: .notModified).serialize(keepAlive: true))
}
