import FuzzSupport
@testable import HTTP

// The HTTP request-head parser (Sources/HTTP/HTTPRequestParser.swift) on arbitrary bytes,
// pipelined: after each complete head the rest is parsed as the next request.
//
// Invariants: the same bytes fed whole, byte by byte and in split reads give the same heads,
// bodies and failure at the same offsets; a head never takes more than `maxHeadBytes`; a body is
// exactly its `Content-Length`; a decoded path starts with the byte "/" (as a `String` it may
// not: `/%E2%83%AC` decodes to "/" and a combining mark, one character); a failed parser keeps failing.

/// The limit is small so that inputs of a few KiB reach it.
let maxHeadBytes = 1024

/// What parsing a stream found, with each request's end as an offset in the whole stream.
struct Outcome: Equatable {
    var requests: [(head: HTTPRequestHead, body: [UInt8], end: Int)] = []
    var failure: HTTPParseError?
    /// Whether bytes of an unfinished head were left when the input ended.
    var partial = false

    static func == (lhs: Outcome, rhs: Outcome) -> Bool {
        lhs.failure == rhs.failure && lhs.partial == rhs.partial
            && lhs.requests.elementsEqual(rhs.requests) { $0.head == $1.head && $0.body == $1.body && $0.end == $1.end }
    }
}

/// Feeds `reads` in order, handing the bytes after each complete head back to the parser.
func parse(_ reads: [[UInt8]]) -> Outcome {
    var parser = HTTPRequestParser(maxHeadBytes: maxHeadBytes)
    var outcome = Outcome()
    var offset = 0
    var lastEnd = 0
    reading: for read in reads {
        var rest = read[...]
        while true {
            let result = rest.withUnsafeBytes { parser.parse($0) }
            switch result {
            case .needMoreData:
                offset += rest.count
                continue reading
            case .request(let head, let body, let consumed):
                precondition(consumed > 0 && consumed <= rest.count, "consumed \(consumed) of \(rest.count)")
                offset += consumed
                precondition(offset - lastEnd - body.count <= maxHeadBytes, "a head passed the limit")
                precondition(head.path.utf8.first == UInt8(ascii: "/"), "decoded path \(head.path) does not start with /")
                switch head.body {
                case .length(let length): precondition(body.count == length, "a body of \(body.count) for \(length)")
                default: precondition(body.isEmpty, "a body for a head without Content-Length")
                }
                precondition(!parser.hasPartialRequest, "a partial request right after a complete one")
                lastEnd = offset
                outcome.requests.append((head, body, offset))
                rest = rest.dropFirst(consumed)
            case .unreadBody:
                preconditionFailure("parse(_:) reads every body up to its limit")
            case .failure(let error):
                let again = [UInt8(ascii: "G")].withUnsafeBytes { parser.parse($0) }
                precondition(again == .failure(error), "a failed parser did not repeat its failure")
                outcome.failure = error
                return outcome
            }
        }
    }
    outcome.partial = parser.hasPartialRequest
    return outcome
}

Fuzzer.run { data in
    let bytes = Array(data)
    // The cuts come from the content, so that seed files are plain requests.
    let seed = bytes.reduce(0, ^)
    let whole = parse([bytes])
    let byteByByte = parse(bytes.map { [$0] })
    precondition(whole == byteByByte, "byte-by-byte feeding differs: \(whole) vs \(byteByByte)")
    let split = parse(pieces(of: bytes, seed: seed))
    precondition(whole == split, "split feeding differs: \(whole) vs \(split)")
}
