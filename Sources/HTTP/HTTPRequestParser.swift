import Bytes

/// Incremental HTTP/1.1 request parser for one connection.
///
/// Feed it each read as it arrives. It scans for the empty line that ends the head, keeping an
/// incomplete head in a buffer bounded by `maxHeadBytes`; once the head is complete it parses the
/// request line and fields in one pass, then reads a `Content-Length` body of at most
/// `maxBodyBytes` (a larger one fails with `413` before a byte of it is kept; a chunked one with
/// `411`, since a body's length is what lets a small fixed buffer bound it). It reports how many
/// of the call's bytes the request used, so the caller can hand the rest (WebSocket frames sent
/// right behind an upgrade, or a pipelined request) onward.
///
/// Line ends may be CRLF or a bare LF (RFC 9112 §2.2), and empty lines before a request line are
/// skipped, as the same section asks of servers. Owned by the connection's event loop; it is a
/// value type holding only bytes and counters, hence `Sendable`.
public struct HTTPRequestParser: Sendable {
    /// What one call to `parse` found.
    public enum Result: Sendable, Equatable {
        /// The head is incomplete; every byte passed in was kept.
        case needMoreData
        /// A complete request: its head and body (empty without one); `consumed` bytes of this
        /// call's input belong to it (and to any empty lines skipped before it). The parser is
        /// reset for the next request.
        case request(HTTPRequestHead, body: [UInt8] = [], consumed: Int)
        /// The head is unacceptable; the connection cannot be used for anything else.
        case failure(HTTPParseError)
    }

    /// The most bytes a head may take, counting the request line, the fields, every line end,
    /// the final empty line and any empty lines skipped before the request line.
    public let maxHeadBytes: Int
    /// The largest `Content-Length` accepted; 0 refuses every body.
    public let maxBodyBytes: Int

    /// Bytes of an incomplete head carried over from earlier calls.
    ///
    /// Empty between requests, so a head that arrives in one read is parsed straight from the
    /// caller's buffer without a copy; emptied by reassignment (not `removeAll(keepingCapacity:)`)
    /// because most connections upgrade and never parse HTTP again.
    private var pending: [UInt8] = []
    /// Head bytes counted so far for the current request, compared against `maxHeadBytes` before
    /// each byte so an oversized head fails as soon as it passes the limit, end seen or not.
    private var headLength = 0
    /// What the current line holds so far; an empty line, or one holding only a CR, ends the head.
    private var line = LineState.empty
    /// Whether the request line has begun; until then empty lines are skipped, not taken as the
    /// end of an empty head.
    private var inRequest = false
    /// The failure, once there is one: the stream has lost its framing, so every later call
    /// repeats it rather than guessing where a next request might start.
    private var failed: HTTPParseError?
    /// The head whose body is being read, and the body so far; nil while reading a head.
    private var bodyHead: HTTPRequestHead?
    private var body: [UInt8] = []
    /// Body bytes still to come for `bodyHead`.
    private var bodyRemaining = 0

    /// The content of the line being scanned, enough to tell an empty line from the rest.
    private enum LineState: Sendable {
        /// Nothing since the last LF.
        case empty
        /// Only a CR since the last LF: an LF now makes a CRLF empty line.
        case carriageReturn
        /// Anything else; the next LF ends an ordinary line.
        case content
    }

    public init(maxHeadBytes: Int = 8192, maxBodyBytes: Int = 0) {
        precondition(maxHeadBytes > 0, "maxHeadBytes must be positive")
        precondition(maxBodyBytes >= 0, "maxBodyBytes must not be negative")
        self.maxHeadBytes = maxHeadBytes
        self.maxBodyBytes = maxBodyBytes
    }

    /// Whether part of a request has arrived and not been completed, e.g. to tell an idle
    /// keep-alive connection (close silently) from a slow client (answer `408`).
    public var hasPartialRequest: Bool {
        inRequest || !pending.isEmpty || bodyHead != nil
    }

    /// Parses from `bytes`, the newest read.
    ///
    /// `consumed` in `.request` counts the bytes of this call's input that belong to the head; the
    /// parser is then reset, so the caller passes the remaining bytes to it again for a pipelined
    /// request, or to the WebSocket decoder after an upgrade.
    public mutating func parse(_ bytes: UnsafeRawBufferPointer) -> Result {
        if let failed { return .failure(failed) }
        if bodyHead != nil { return readBody(bytes, from: 0) }
        // First byte of this input belonging to the head: skipped empty lines move it forward.
        var start = 0
        var index = 0
        while index < bytes.count {
            if headLength >= maxHeadBytes { return fail(.headersTooLarge) }
            let byte = bytes[index]
            index += 1
            headLength += 1
            switch byte {
            case ASCII.lineFeed where line == .content:
                line = .empty
            case ASCII.lineFeed where !inRequest:
                start = index
                pending = []
                line = .empty
            case ASCII.lineFeed:
                return complete(bytes, from: start, to: index)
            case ASCII.carriageReturn where line == .empty:
                line = .carriageReturn
            default:
                line = .content
                inRequest = true
            }
        }
        pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start...]))
        return .needMoreData
    }

    /// Parses the finished head (`pending` plus `bytes[start..<end]`) and resets for the next one.
    private mutating func complete(_ bytes: UnsafeRawBufferPointer, from start: Int, to end: Int) -> Result {
        let tail = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
        let parsed: Swift.Result<HTTPRequestHead, HTTPParseError>
        if pending.isEmpty {
            parsed = Self.parseHead(tail)
        } else {
            pending.append(contentsOf: tail)
            parsed = pending.withUnsafeBytes { Self.parseHead($0) }
        }
        pending = []
        headLength = 0
        line = .empty
        inRequest = false
        switch parsed {
        case .failure(let error):
            return fail(error)
        case .success(let head):
            switch head.body {
            case .chunked:
                return fail(.lengthRequired)
            case .length(let length) where length > maxBodyBytes:
                return fail(.bodyTooLarge(limit: maxBodyBytes))
            case .length(0):
                return .request(head, consumed: end)
            case .length(let length):
                bodyHead = head
                bodyRemaining = length
                body.reserveCapacity(length)
                return readBody(bytes, from: end)
            }
        }
    }

    /// Takes body bytes from `bytes[offset...]`; reports the request once the body is whole.
    private mutating func readBody(_ bytes: UnsafeRawBufferPointer, from offset: Int) -> Result {
        let taken = min(bodyRemaining, bytes.count - offset)
        body.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + taken)]))
        bodyRemaining -= taken
        guard bodyRemaining == 0, let head = bodyHead else { return .needMoreData }
        let complete = body
        bodyHead = nil
        body = []
        return .request(head, body: complete, consumed: offset + taken)
    }

    /// Records `error` so that later calls repeat it, and reports it.
    private mutating func fail(_ error: HTTPParseError) -> Result {
        failed = error
        pending = []
        return .failure(error)
    }

    /// Parses a complete head, request line through the final empty line.
    private static func parseHead(_ head: UnsafeRawBufferPointer) -> Swift.Result<HTTPRequestHead, HTTPParseError> {
        Swift.Result { () throws(HTTPParseError) in try HTTPHeadParser(head).parse() }
    }
}
