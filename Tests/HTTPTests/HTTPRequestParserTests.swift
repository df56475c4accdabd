import Testing

@testable import HTTP

/// Feeds `text` to a fresh parser in one call.
func parseOnce(_ text: String, maxHeadBytes: Int = 8192, maxBodyBytes: Int = 0) -> HTTPRequestParser.Result {
    var parser = HTTPRequestParser(maxHeadBytes: maxHeadBytes, maxBodyBytes: maxBodyBytes)
    return feed(&parser, Array(text.utf8))
}

/// Feeds `bytes` to `parser` in one call.
func feed(_ parser: inout HTTPRequestParser, _ bytes: some Collection<UInt8>) -> HTTPRequestParser.Result {
    Array(bytes).withUnsafeBytes { parser.parse($0) }
}

/// The head of a `.request` result, or nil.
func head(_ result: HTTPRequestParser.Result) -> HTTPRequestHead? {
    if case .request(let head, _, _) = result { return head }
    return nil
}

let upgradeRequest =
    "GET /rooms/lobby?name=al%20ice HTTP/1.1\r\nHost: example.com\r\nUpgrade: websocket\r\n"
    + "Connection: keep-alive, Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
    + "Sec-WebSocket-Version: 13\r\n\r\n"

@Test func parsesUpgradeRequestHead() throws {
    let result = parseOnce(upgradeRequest)
    let parsed = try #require(head(result))
    #expect(parsed.method == "GET")
    #expect(parsed.target == "/rooms/lobby?name=al%20ice")
    #expect(parsed.path == "/rooms/lobby")
    #expect(parsed.query == ["name": "al ice"])
    #expect(parsed.version == .http1_1)
    #expect(parsed.headers.count == 5)
    #expect(parsed.headers["sec-websocket-key"] == "dGhlIHNhbXBsZSBub25jZQ==")
    #expect(parsed.headers.containsToken("upgrade", in: "connection"))
    #expect(parsed.keepAlive)
    #expect(parsed.body == .length(0))
    #expect(result == .request(parsed, consumed: upgradeRequest.utf8.count))
}

@Test func byteByByteFeedingYieldsTheSameHead() throws {
    let bytes = Array(upgradeRequest.utf8)
    let whole = try #require(head(parseOnce(upgradeRequest)))
    var parser = HTTPRequestParser()
    for byte in bytes.dropLast() {
        #expect(feed(&parser, [byte]) == .needMoreData)
        #expect(parser.hasPartialRequest)
    }
    #expect(feed(&parser, [bytes.last!]) == .request(whole, consumed: 1))
    #expect(!parser.hasPartialRequest)
}

@Test func everySplitPointYieldsTheSameHead() throws {
    let bytes = Array(upgradeRequest.utf8)
    let whole = try #require(head(parseOnce(upgradeRequest)))
    for split in 0..<bytes.count {
        var parser = HTTPRequestParser()
        #expect(feed(&parser, bytes[..<split]) == .needMoreData, "split at \(split)")
        #expect(feed(&parser, bytes[split...]) == .request(whole, consumed: bytes.count - split), "split at \(split)")
    }
}

@Test func pipelinedRequestsInOneBufferParseInTurn() throws {
    let first = "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n"
    let second = "GET /readyz HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
    let bytes = Array((first + second).utf8)
    var parser = HTTPRequestParser()
    let one = feed(&parser, bytes)
    let firstHead = try #require(head(one))
    #expect(firstHead.path == "/healthz")
    #expect(one == .request(firstHead, consumed: first.utf8.count))
    let two = feed(&parser, bytes[first.utf8.count...])
    let secondHead = try #require(head(two))
    #expect(secondHead.path == "/readyz")
    #expect(!secondHead.keepAlive)
    #expect(two == .request(secondHead, consumed: second.utf8.count))
}

@Test func consumedStopsWhereWebSocketFramesBegin() throws {
    let frame: [UInt8] = [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58]
    let bytes = Array(upgradeRequest.utf8)
    var parser = HTTPRequestParser()
    #expect(feed(&parser, bytes[..<10]) == .needMoreData)
    let result = feed(&parser, Array(bytes[10...]) + frame)
    let parsed = try #require(head(result))
    #expect(result == .request(parsed, consumed: bytes.count - 10))
}

@Test func headOfExactlyTheLimitIsAccepted() throws {
    let base = "GET / HTTP/1.1\r\nHost: a\r\nX-Pad: \r\n\r\n"
    let padding = String(repeating: "p", count: 8192 - base.utf8.count)
    let text = "GET / HTTP/1.1\r\nHost: a\r\nX-Pad: \(padding)\r\n\r\n"
    #expect(text.utf8.count == 8192)
    let parsed = try #require(head(parseOnce(text)))
    #expect(parsed.headers["x-pad"] == padding)
}

@Test func headOneByteOverTheLimitIsTooLarge() {
    let base = "GET / HTTP/1.1\r\nHost: a\r\nX-Pad: \r\n\r\n"
    let padding = String(repeating: "p", count: 8193 - base.utf8.count)
    let text = "GET / HTTP/1.1\r\nHost: a\r\nX-Pad: \(padding)\r\n\r\n"
    #expect(text.utf8.count == 8193)
    #expect(parseOnce(text) == .failure(.headersTooLarge))
}

@Test func longRequestLineFailsBeforeTheHeadEnds() {
    var parser = HTTPRequestParser(maxHeadBytes: 8192)
    let start = Array("GET /".utf8) + Array(repeating: UInt8(ascii: "a"), count: 8187)
    #expect(start.count == 8192)
    #expect(feed(&parser, start) == .needMoreData)
    #expect(feed(&parser, Array("a".utf8)) == .failure(.headersTooLarge))
}

@Test func failureIsRepeatedOnLaterCalls() {
    var parser = HTTPRequestParser()
    #expect(feed(&parser, Array("GET / HTTP/2.0\r\n\r\n".utf8)) == .failure(.unsupportedVersion))
    #expect(feed(&parser, Array(upgradeRequest.utf8)) == .failure(.unsupportedVersion))
}

@Test func bareLineFeedsEndLinesAndTheHead() throws {
    let text = "GET /echo HTTP/1.1\nHost: a\nUpgrade: websocket\n\n"
    let result = parseOnce(text)
    let parsed = try #require(head(result))
    #expect(parsed.path == "/echo")
    #expect(parsed.headers["Host"] == "a")
    #expect(parsed.headers["Upgrade"] == "websocket")
    #expect(result == .request(parsed, consumed: text.utf8.count))
}

@Test func mixedLineEndsAreAccepted() throws {
    let parsed = try #require(head(parseOnce("GET / HTTP/1.1\r\nHost: a\n\r\n")))
    #expect(parsed.headers["host"] == "a")
}

@Test func emptyLinesBeforeTheRequestLineAreSkipped() throws {
    let text = "\r\n\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n"
    let result = parseOnce(text)
    let parsed = try #require(head(result))
    #expect(parsed.path == "/")
    #expect(result == .request(parsed, consumed: text.utf8.count))
}

@Test(arguments: [
    "GET /\r\nHost: a\r\n\r\n",
    "GET\r\nHost: a\r\n\r\n",
    " GET / HTTP/1.1\r\nHost: a\r\n\r\n",
    "GET  / HTTP/1.1\r\nHost: a\r\n\r\n",
    "GET / HTTP/1.1 \r\nHost: a\r\n\r\n",
    "GET /a b HTTP/1.1\r\nHost: a\r\n\r\n",
    "GET /a\u{01}b HTTP/1.1\r\nHost: a\r\n\r\n",
    "GET /caf\u{E9} HTTP/1.1\r\nHost: a\r\n\r\n",
    "G(T / HTTP/1.1\r\nHost: a\r\n\r\n",
    "GET\t/ HTTP/1.1\r\nHost: a\r\n\r\n",
    "GET rooms HTTP/1.1\r\nHost: a\r\n\r\n",
    "GET http://a/ HTTP/1.1\r\nHost: a\r\n\r\n",
    "GET / http/1.1\r\nHost: a\r\n\r\n",
    "GET / HTTP/1.10\r\nHost: a\r\n\r\n",
    "GET / HTTP/1\r\nHost: a\r\n\r\n",
    "GET / HTTP/1.1\rX\r\nHost: a\r\n\r\n",
    "GET / HTTP/1.1\r\nHost : a\r\n\r\n",
    "GET / HTTP/1.1\r\nHost\t: a\r\n\r\n",
    "GET / HTTP/1.1\r\nHost: a\r\nX-A: b\r\n  folded\r\n\r\n",
    "GET / HTTP/1.1\r\nHost: a\r\n\tfolded\r\n\r\n",
    "GET / HTTP/1.1\r\nHost: a\r\nNo colon here\r\n\r\n",
    "GET / HTTP/1.1\r\nHost: a\r\n: empty name\r\n\r\n",
    "GET / HTTP/1.1\r\nHost: a\r\nX(y): z\r\n\r\n",
    "GET / HTTP/1.1\r\nHost: a\r\nX: a\u{00}b\r\n\r\n",
    "GET / HTTP/1.1\r\nHost: a\r\nX: a\rb\r\n\r\n",
    "GET / HTTP/1.1\r\n\r\n",
    "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
    "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1x\r\n\r\n",
    "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n",
    "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
    "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n",
    "GET /%zz HTTP/1.1\r\nHost: a\r\n\r\n",
])
func malformedHeadIsRejectedWith400(_ text: String) {
    let result = parseOnce(text)
    guard case .failure(let error) = result, case .malformed = error else {
        Issue.record("expected malformed, got \(result)")
        return
    }
    #expect(error.status == .badRequest)
}

@Test(arguments: ["HTTP/2.0", "HTTP/0.9", "HTTP/3"])
func otherHTTPVersionsAreUnsupported(_ version: String) {
    let result = parseOnce("GET / \(version)\r\nHost: a\r\n\r\n")
    #expect(result == .failure(.unsupportedVersion))
}

@Test func methodIsReturnedAsReceived() throws {
    #expect(try #require(head(parseOnce("POST / HTTP/1.1\r\nHost: a\r\n\r\n"))).method == "POST")
    #expect(try #require(head(parseOnce("get / HTTP/1.1\r\nHost: a\r\n\r\n"))).method == "get")
}

@Test func keepAliveFollowsVersionAndConnectionHeader() throws {
    #expect(try #require(head(parseOnce("GET / HTTP/1.1\r\nHost: a\r\n\r\n"))).keepAlive)
    #expect(try !#require(head(parseOnce("GET / HTTP/1.1\r\nHost: a\r\nConnection: Close\r\n\r\n"))).keepAlive)
    #expect(try !#require(head(parseOnce("GET / HTTP/1.0\r\n\r\n"))).keepAlive)
    #expect(try #require(head(parseOnce("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"))).keepAlive)
}

@Test func bodyOfContentLengthIsReadAndKeepsTheConnection() throws {
    let text = "POST /api HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello"
    let result = parseOnce(text, maxBodyBytes: 64)
    guard case .request(let parsed, let body, let consumed) = result else {
        Issue.record("expected a request, got \(result)")
        return
    }
    #expect(parsed.body == .length(5))
    #expect(parsed.keepAlive)
    #expect(body == Array("hello".utf8))
    #expect(consumed == text.utf8.count)
}

@Test func bodySplitAtEveryPointYieldsTheSameRequestAndLeavesTheNextOne() throws {
    let first = "POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\nhello world"
    let bytes = Array((first + "GET /b HTTP/1.1\r\nHost: a\r\n\r\n").utf8)
    for split in 1..<first.utf8.count {
        var parser = HTTPRequestParser(maxBodyBytes: 64)
        #expect(feed(&parser, bytes[..<split]) == .needMoreData, "split at \(split)")
        let rest = Array(bytes[split...])
        guard case .request(_, let body, let consumed) = feed(&parser, rest) else {
            Issue.record("no request after the split at \(split)")
            continue
        }
        #expect(body == Array("hello world".utf8), "split at \(split)")
        #expect(try #require(head(feed(&parser, rest[consumed...]))).path == "/b", "split at \(split)")
    }
}

@Test func bodyPastTheLimitIsRefusedWith413BeforeItArrives() {
    let result = parseOnce("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 65\r\n\r\n", maxBodyBytes: 64)
    #expect(result == .failure(.bodyTooLarge(limit: 64)))
    #expect(HTTPParseError.bodyTooLarge(limit: 64).status.code == 413)
    #expect(parseOnce("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n\r\nx") == .failure(.bodyTooLarge(limit: 0)))
}

@Test func chunkedBodyIsRefusedWith411() {
    let result = parseOnce("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n", maxBodyBytes: 64)
    #expect(result == .failure(.lengthRequired))
    #expect(HTTPParseError.lengthRequired.status.code == 411)
}

@Test func emptyContentLengthIsNoBody() throws {
    let empty = try #require(head(parseOnce("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n")))
    #expect(empty.body == .length(0))
    #expect(empty.keepAlive)
}

@Test func headerValuesAreTrimmedAndNamesKeptAsReceived() throws {
    let parsed = try #require(head(parseOnce("GET / HTTP/1.1\r\nhOsT:\t a b \t\r\nX-Empty:\r\n\r\n")))
    #expect(Array(parsed.headers.map(\.name)) == ["hOsT", "X-Empty"])
    #expect(parsed.headers["Host"] == "a b")
    #expect(parsed.headers["x-empty"] == "")
}

@Test func descriptionForLogsLeavesTheQueryOut() throws {
    let parsed = try #require(head(parseOnce("GET /api/v1/presence/stream?token=secret HTTP/1.1\r\nHost: a\r\n\r\n")))
    #expect(parsed.description == "GET /api/v1/presence/stream HTTP/1.1")
}
