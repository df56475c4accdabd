import Bytes

/// Parses one complete request head, from the request line through the final empty line.
///
/// `HTTPRequestParser` finds where a head ends and hands the whole of it here, so this works on a
/// contiguous buffer with plain index ranges and never waits for bytes. Lines end in LF with an
/// optional CR before it; any other CR is a control character and refused where it appears.
struct HTTPHeadParser {
    /// The head, including its line ends and the final empty line.
    private let head: UnsafeRawBufferPointer

    init(_ head: UnsafeRawBufferPointer) {
        self.head = head
    }

    /// The request the head describes, or why it is not acceptable.
    func parse() throws(HTTPParseError) -> HTTPRequestHead {
        var position = 0
        guard let requestLine = nextLine(&position) else {
            throw .malformed("the request line is missing")
        }
        let (methodRange, targetRange, version) = try parseRequestLine(requestLine)
        var headers = HTTPHeaders()
        while let line = nextLine(&position), !line.isEmpty {
            try parseField(line, into: &headers)
        }
        let framing = try Self.bodyFraming(headers, version: version)
        let (path, query) = try PercentDecoding.splitTarget(slice(targetRange))
        let keepAlive: Bool
        if version.minor >= 1 {
            keepAlive = !headers.containsToken("close", in: "Connection")
        } else {
            keepAlive = headers.containsToken("keep-alive", in: "Connection")
        }
        return HTTPRequestHead(
            method: string(methodRange), target: string(targetRange), path: path, query: query,
            version: version, headers: headers, keepAlive: keepAlive, body: framing)
    }

    /// The next line's content (without CR LF or LF) starting at `position`, which moves past it.
    private func nextLine(_ position: inout Int) -> Range<Int>? {
        guard position < head.count else { return nil }
        let start = position
        while position < head.count && head[position] != ASCII.lineFeed { position += 1 }
        var end = position
        position += 1
        if end > start && head[end - 1] == ASCII.carriageReturn { end -= 1 }
        return start..<end
    }

    /// Splits `METHOD SP target SP HTTP/x.y` and checks each part.
    private func parseRequestLine(
        _ line: Range<Int>
    ) throws(HTTPParseError) -> (method: Range<Int>, target: Range<Int>, version: HTTPVersion) {
        guard let firstSpace = firstIndex(of: ASCII.space, in: line) else {
            throw .malformed("the request line has no target")
        }
        let method = line.lowerBound..<firstSpace
        guard !method.isEmpty, method.allSatisfy({ HTTPGrammar.isTokenByte(head[$0]) }) else {
            throw .malformed("the method is not a token")
        }
        let rest = (firstSpace + 1)..<line.upperBound
        guard let secondSpace = firstIndex(of: ASCII.space, in: rest) else {
            throw .malformed("the request line has no HTTP version")
        }
        let target = rest.lowerBound..<secondSpace
        let versionRange = (secondSpace + 1)..<line.upperBound
        guard firstIndex(of: ASCII.space, in: versionRange) == nil else {
            throw .malformed("the request line has more than three parts (a space in the target?)")
        }
        guard !target.isEmpty else {
            throw .malformed("the request target is empty")
        }
        guard target.allSatisfy({ HTTPGrammar.isTargetByte(head[$0]) }) else {
            throw .malformed("the request target contains a control or non-ASCII character")
        }
        guard head[target.lowerBound] == UInt8(ascii: "/") else {
            throw .malformed("the request target does not start with /")
        }
        return (method, target, try parseVersion(versionRange))
    }

    /// Reads `HTTP/DIGIT.DIGIT`; a well-formed version other than 1.x is `unsupportedVersion`.
    private func parseVersion(_ range: Range<Int>) throws(HTTPParseError) -> HTTPVersion {
        let bytes = slice(range)
        let prefix = "HTTP/".utf8
        guard bytes.count > prefix.count, bytes.starts(with: prefix) else {
            throw .malformed("the request line does not end with an HTTP version")
        }
        let major = bytes[5]
        if major >= UInt8(ascii: "0") && major <= UInt8(ascii: "9") && major != UInt8(ascii: "1") {
            throw .unsupportedVersion
        }
        guard bytes.count == 8, major == UInt8(ascii: "1"), bytes[6] == UInt8(ascii: "."),
            bytes[7] >= UInt8(ascii: "0"), bytes[7] <= UInt8(ascii: "9")
        else {
            throw .malformed("the HTTP version is not of the form HTTP/1.x")
        }
        return HTTPVersion(major: 1, minor: Int(bytes[7] - UInt8(ascii: "0")))
    }

    /// Reads `name ":" OWS value OWS` into `headers`.
    private func parseField(_ line: Range<Int>, into headers: inout HTTPHeaders) throws(HTTPParseError) {
        guard !HTTPGrammar.isWhitespace(head[line.lowerBound]) else {
            throw .malformed("a header line starts with whitespace (obsolete line folding)")
        }
        guard let colon = firstIndex(of: ASCII.colon, in: line) else {
            throw .malformed("a header line has no colon")
        }
        let name = line.lowerBound..<colon
        guard !name.isEmpty else {
            throw .malformed("a header line has an empty name")
        }
        for index in name where !HTTPGrammar.isTokenByte(head[index]) {
            if HTTPGrammar.isWhitespace(head[index]) {
                throw .malformed("a header name is followed by whitespace before its colon")
            }
            throw .malformed("a header name contains a character that is not allowed")
        }
        var valueStart = colon + 1
        var valueEnd = line.upperBound
        while valueStart < valueEnd && HTTPGrammar.isWhitespace(head[valueStart]) { valueStart += 1 }
        while valueEnd > valueStart && HTTPGrammar.isWhitespace(head[valueEnd - 1]) { valueEnd -= 1 }
        let value = valueStart..<valueEnd
        guard value.allSatisfy({ HTTPGrammar.isFieldValueByte(head[$0]) }) else {
            throw .malformed("a header value contains a control character")
        }
        headers.add(string(name), string(value))
    }

    /// How the request's body is framed, after the checks RFC 9112 makes mandatory for a
    /// server: exactly one `Host` in HTTP/1.1 (§3.2), and unambiguous framing (§6.1, §6.3),
    /// since conflicting framing is how requests get smuggled past proxies.
    private static func bodyFraming(
        _ headers: HTTPHeaders, version: HTTPVersion
    ) throws(HTTPParseError) -> HTTPRequestHead.BodyFraming {
        let hosts = headers.values("Host").count
        if hosts == 0 && version.minor >= 1 {
            throw .malformed("an HTTP/1.1 request has no Host header")
        }
        if hosts > 1 {
            throw .malformed("the request has more than one Host header")
        }
        var length: Int?
        for value in headers.values("Content-Length") {
            let digits = value.utf8
            guard !digits.isEmpty, digits.count <= 18,
                digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
            else {
                throw .malformed("the Content-Length is not a number")
            }
            let parsed = digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
            if let length, length != parsed {
                throw .malformed("the Content-Length headers disagree")
            }
            length = parsed
        }
        let chunked = headers.contains("Transfer-Encoding")
        if chunked && length != nil {
            throw .malformed("the request has both Transfer-Encoding and Content-Length")
        }
        if chunked { return .chunked }
        return .length(length ?? 0)
    }

    private func firstIndex(of byte: UInt8, in range: Range<Int>) -> Int? {
        range.first { head[$0] == byte }
    }

    private func slice(_ range: Range<Int>) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: head[range])
    }

    private func string(_ range: Range<Int>) -> String {
        String(decoding: slice(range), as: UTF8.self)
    }
}
