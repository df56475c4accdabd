import Testing

@testable import HTTP

/// The decoded query of `GET <target>`.
private func query(of target: String) throws -> [String: String] {
    try #require(head(parseOnce("GET \(target) HTTP/1.1\r\nHost: a\r\n\r\n"))).query
}

@Test func queryParametersAreDecoded() throws {
    #expect(try query(of: "/x?a=1&b=x%20y&c=+&d") == ["a": "1", "b": "x y", "c": " ", "d": ""])
}

@Test func emptyQueryPairsAreSkipped() throws {
    #expect(try query(of: "/x?&a=1&&b=2&") == ["a": "1", "b": "2"])
    #expect(try query(of: "/x?") == [:])
}

@Test func repeatedQueryNameKeepsTheLastValue() throws {
    #expect(try query(of: "/x?name=a&name=b") == ["name": "b"])
}

@Test func queryNamesAndValuesAreBothDecoded() throws {
    #expect(try query(of: "/x?na%6De=al+ice%21&eq=a%3Db=c") == ["name": "al ice!", "eq": "a=b=c"])
}

@Test func queryDecodesUTF8Escapes() throws {
    #expect(try query(of: "/x?name=J%C3%BCrgen") == ["name": "Jürgen"])
}

@Test func pathIsDecodedWithoutTreatingPlusAsSpace() throws {
    let parsed = try #require(head(parseOnce("GET /rooms/a+b%2Dc?x=1 HTTP/1.1\r\nHost: a\r\n\r\n")))
    #expect(parsed.path == "/rooms/a+b-c")
    #expect(parsed.target == "/rooms/a+b%2Dc?x=1")
}

@Test(arguments: ["/%", "/%2", "/%G0", "/x?a=%", "/x?a=%4", "/x?%zz=1", "/x?a=%C3", "/%FF"])
func invalidEscapesAreMalformed(_ target: String) {
    let result = parseOnce("GET \(target) HTTP/1.1\r\nHost: a\r\n\r\n")
    guard case .failure(.malformed) = result else {
        Issue.record("expected malformed for \(target), got \(result)")
        return
    }
}

@Test func decodeLeavesUnescapedTextUnchanged() throws {
    let text = Array("/plain/path".utf8)
    let decoded = try text.withUnsafeBytes { bytes in
        try PercentDecoding.decode(bytes, plusIsSpace: true)
    }
    #expect(decoded == "/plain/path")
}
