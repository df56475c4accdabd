import Bytes
import Deflate
import FuzzSupport
import WebSocket

// The WebSocket frame decoder (Sources/WebSocket/WebSocketConnection*.swift), with and without
// permessage-deflate (Sources/Deflate), on arbitrary client bytes.
//
// Input: one configuration byte, then the bytes the client sends.
//   bits 0-1  0 or 3: no compression; 1: deflate with context takeover; 2: without
//   bits 2-4  the client's window bits, 8 + value
//   bit 5     small limits (256-byte messages) instead of 64 KiB
//   bit 6     frames limited to a quarter of the message limit
//   bit 7     the server starts a close halfway through the input
//
// Invariants: the input fed whole, byte by byte, in split reads and in split reads inflated in
// steps of one output chunk (as the server does under its inflation budget) gives the same events; at
// most one `.closeConnection`, and nothing after it; text is valid UTF-8; no message passes the
// limit; a pong answers at most 125 bytes; a compressed form passed on inflates, alone, to the
// message it came with.

struct Setup {
    var compression: Int
    var windowBits: Int
    var configuration: WebSocketConfiguration
    var closesHalfway: Bool

    init(_ byte: UInt8) {
        compression = Int(byte & 3) % 3
        windowBits = 8 + Int(byte >> 2 & 7)
        let maxMessageSize = byte & 0x20 != 0 ? 256 : 1 << 16
        configuration = WebSocketConfiguration(
            maxMessageSize: maxMessageSize, maxFrameSize: byte & 0x40 != 0 ? maxMessageSize / 4 : nil)
        closesHalfway = byte & 0x80 != 0
    }

    func makeConnection() -> WebSocketConnection {
        guard compression != 0 else { return WebSocketConnection(configuration: configuration) }
        let inflater = MessageInflater(windowBits: windowBits, noContextTakeover: compression == 2)
        return WebSocketConnection(configuration: configuration, decompressor: inflater)
    }
}

/// Feeds one read as the server does when `stepped`: with a budget of one byte of inflation a
/// call, and the bytes a call leaves fed again until none are left and nothing is inflating.
func feed(_ read: [UInt8], to connection: inout WebSocketConnection, stepped: Bool, into events: inout [WebSocketEvent]) {
    guard stepped else { return read.withUnsafeBytes { connection.receive($0, into: &events) } }
    var rest = read[...]
    repeat {
        var budget = 1
        let consumed = rest.withUnsafeBytes { connection.receive($0, into: &events, inflationBudget: &budget) }
        rest = rest.dropFirst(consumed)
    } while !rest.isEmpty || connection.isInflating
}

/// Feeds the reads of `first`, optionally starts a close, then feeds the reads of `second`.
func events(_ setup: Setup, _ first: [[UInt8]], _ second: [[UInt8]], stepped: Bool = false) -> [WebSocketEvent] {
    var connection = setup.makeConnection()
    var events: [WebSocketEvent] = []
    for read in first {
        feed(read, to: &connection, stepped: stepped, into: &events)
    }
    if setup.closesHalfway {
        let wasClosing = connection.isClosing
        let frame = connection.close(code: .goingAway, reason: "fuzz")
        precondition((frame == nil) == wasClosing, "close() answered \(String(describing: frame)) when closing was \(wasClosing)")
        if let frame { events.append(.write(frame)) }
    }
    for read in second {
        feed(read, to: &connection, stepped: stepped, into: &events)
    }
    return events
}

func isClose(_ event: WebSocketEvent) -> Bool {
    if case .closeConnection = event { return true }
    return false
}

func check(_ events: [WebSocketEvent], _ setup: Setup) {
    if let close = events.firstIndex(where: isClose) {
        precondition(close == events.count - 1, "events after .closeConnection: \(events[close...])")
    }
    for event in events {
        switch event {
        case .text(let payload, let compressed):
            precondition(UTF8Validator.isValid(payload), "a text message that is not UTF-8")
            checkMessage(payload, compressed, setup)
        case .binary(let payload, let compressed):
            checkMessage(payload, compressed, setup)
        case .pong(let payload):
            precondition(payload.count <= 125, "a pong of \(payload.count) bytes")
        case .write, .closeConnection:
            break
        }
    }
}

func checkMessage(_ payload: [UInt8], _ compressed: [UInt8]?, _ setup: Setup) {
    precondition(payload.count <= setup.configuration.maxMessageSize, "a message of \(payload.count) bytes passed the limit")
    guard let compressed else { return }
    precondition(setup.compression == 2, "a compressed form passed on under context takeover")
    let inflater = MessageInflater(windowBits: 15, noContextTakeover: true)
    let alone = try? inflater.decompress(compressed, limit: setup.configuration.maxMessageSize)
    precondition(alone?.payload == payload, "the compressed form does not inflate to its message")
}

Fuzzer.run { data in
    var input = FuzzInput(data)
    let setup = Setup(input.byte())
    let bytes = input.rest()
    let half = setup.closesHalfway ? bytes.count / 2 : bytes.count
    let first = Array(bytes[..<half])
    let second = Array(bytes[half...])
    let whole = events(setup, [first], [second])
    check(whole, setup)
    let byteByByte = events(setup, first.map { [$0] }, second.map { [$0] })
    precondition(whole == byteByByte, "byte-by-byte feeding differs:\n\(whole)\n\(byteByByte)")
    let seed = bytes.reduce(0, ^)
    let split = events(setup, pieces(of: first, seed: seed), pieces(of: second, seed: seed &+ 1))
    precondition(whole == split, "split feeding differs:\n\(whole)\n\(split)")
    let stepped = events(setup, pieces(of: first, seed: seed), pieces(of: second, seed: seed &+ 1), stepped: true)
    precondition(whole == stepped, "inflating in steps differs:\n\(whole)\n\(stepped)")
}
