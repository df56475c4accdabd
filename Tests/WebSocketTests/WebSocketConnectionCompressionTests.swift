import Bytes
import Testing
@testable import WebSocket

/// A stand-in for permessage-deflate: "inflates" by reversing the bytes, or fails as told, and
/// records what it was given.
private final class FakeDecompressor: MessageDecompressor {
    var failure: DecompressionError?
    var received: [[UInt8]] = []
    var limits: [Int] = []
    var standsAlone: Bool

    init(failure: DecompressionError? = nil, standsAlone: Bool = false) {
        self.failure = failure
        self.standsAlone = standsAlone
    }

    /// A message's output and how much of it has been produced.
    final class Pending: PendingInflation {
        let output: [UInt8]
        var produced = 0

        init(_ output: [UInt8]) { self.output = output }
    }

    func decompress(_ payload: [UInt8], limit: Int, budget: Int) throws(DecompressionError) -> DecompressionStep {
        received.append(payload)
        limits.append(limit)
        return try resume(Pending(payload.reversed()), budget: budget)
    }

    /// Produces `budget` bytes of output a call, at least one.
    func resume(_ pending: any PendingInflation, budget: Int) throws(DecompressionError) -> DecompressionStep {
        if let failure { throw failure }
        guard let pending = pending as? Pending else { throw .corrupt }
        pending.produced += min(max(budget, 1), pending.output.count - pending.produced)
        guard pending.produced == pending.output.count else { return .pending(pending) }
        return .done(DecompressedMessage(payload: pending.output, standsAlone: standsAlone))
    }
}

private func compressedEvents(
    _ bytes: [UInt8],
    decompressor: FakeDecompressor,
    configuration: WebSocketConfiguration = WebSocketConfiguration()
) -> [WebSocketEvent] {
    events(feeding: bytes.map { [$0] }, configuration: configuration, decompressor: decompressor)
}

@Test func carriesTheCompressedPayloadOfAMessageThatStandsAlone() {
    let bytes = ClientFrame.make(opcode: 1, Array("ab".utf8), fin: false, rsv: 0x40) + ClientFrame.continuation(Array("cd".utf8))
        + ClientFrame.make(opcode: 2, [1, 2, 3], rsv: 0x40) + ClientFrame.text("plain")
    let result = compressedEvents(bytes, decompressor: FakeDecompressor(standsAlone: true))
    #expect(result == [
        .text(Array("dcba".utf8), compressed: Array("abcd".utf8)),
        .binary([3, 2, 1], compressed: [1, 2, 3]),
        .text(Array("plain".utf8)),
    ])
    // A decompressor that keeps context: the event has the inflated message only.
    #expect(compressedEvents(ClientFrame.make(opcode: 1, Array("ab".utf8), rsv: 0x40), decompressor: FakeDecompressor())
        == [.text(Array("ba".utf8))])
}

@Test func inflatesWholeMessageAtFin() {
    let decompressor = FakeDecompressor()
    let bytes = ClientFrame.make(opcode: 1, Array("ab".utf8), fin: false, rsv: 0x40) + ClientFrame.ping([5])
        + ClientFrame.continuation(Array("cd".utf8))
    let result = compressedEvents(bytes, decompressor: decompressor)
    #expect(result == [.write(FrameEncoder.frame(.pong, payload: [5])), .text(Array("dcba".utf8))])
    #expect(decompressor.received == [Array("abcd".utf8)])
    #expect(decompressor.limits == [1 << 20])
}

@Test func leavesUncompressedMessagesAlone() {
    let decompressor = FakeDecompressor()
    #expect(compressedEvents(ClientFrame.binary([1, 2]), decompressor: decompressor) == [.binary([1, 2])])
    #expect(decompressor.received.isEmpty)
}

@Test func rejectsCompressionBitOnContinuation() {
    let bytes = ClientFrame.make(opcode: 2, [1], fin: false, rsv: 0x40) + ClientFrame.make(opcode: 0, [2], rsv: 0x40)
    #expect(compressedEvents(bytes, decompressor: FakeDecompressor()) == failureEvents(.misplacedCompressionBit))
}

@Test func rejectsCompressionBitOnControlFrame() {
    let bytes = ClientFrame.make(opcode: 9, [1], rsv: 0x40)
    #expect(compressedEvents(bytes, decompressor: FakeDecompressor()) == failureEvents(.misplacedCompressionBit))
}

@Test func rejectsOtherReservedBitsEvenWithCompression() {
    let bytes = ClientFrame.make(opcode: 1, [0x41], rsv: 0x60)
    #expect(compressedEvents(bytes, decompressor: FakeDecompressor()) == failureEvents(.reservedBitsSet))
}

@Test func closesWith1009WhenInflatedMessageIsTooLarge() {
    let bytes = ClientFrame.make(opcode: 2, [1, 2, 3], rsv: 0x40)
    let result = compressedEvents(bytes, decompressor: FakeDecompressor(failure: .tooLarge))
    #expect(result == failureEvents(.messageTooBig))
}

@Test func closesWith1007WhenCompressedDataIsCorrupt() {
    let bytes = ClientFrame.make(opcode: 2, [1, 2, 3], rsv: 0x40)
    let result = compressedEvents(bytes, decompressor: FakeDecompressor(failure: .corrupt))
    #expect(result == failureEvents(.corruptCompressedMessage))
    #expect(WebSocketError.corruptCompressedMessage.closeCode == .invalidPayload)
}

@Test func validatesInflatedText() {
    // Reversed, [0xAC, 0x82, 0xE2] becomes "€"; reversed "€" is invalid UTF-8.
    let valid = ClientFrame.make(opcode: 1, [0xAC, 0x82, 0xE2], rsv: 0x40)
    #expect(compressedEvents(valid, decompressor: FakeDecompressor()) == [.text([0xE2, 0x82, 0xAC])])
    let invalid = ClientFrame.make(opcode: 1, [0xE2, 0x82, 0xAC], rsv: 0x40)
    #expect(compressedEvents(invalid, decompressor: FakeDecompressor()) == failureEvents(.invalidUTF8))
}

@Test func boundsCompressedSizeByMessageLimitPlusDeflateSlack() {
    // Limit 64: compressed messages may reach 64 + 64/64 + 1024 = 1089 bytes.
    let configuration = WebSocketConfiguration(maxMessageSize: 64)
    let tooBig = ClientFrame.make(opcode: 2, [UInt8](repeating: 1, count: 1000), fin: false, rsv: 0x40)
        + ClientFrame.continuation([UInt8](repeating: 2, count: 100))
    let decompressor = FakeDecompressor()
    #expect(compressedEvents(tooBig, decompressor: decompressor, configuration: configuration) == failureEvents(.messageTooBig))
    #expect(decompressor.received.isEmpty)
}

@Test func incompressibleMessageSlightlyOverTheLimitStillReachesTheInflater() {
    let configuration = WebSocketConfiguration(maxMessageSize: 64)
    let bytes = ClientFrame.make(opcode: 2, [UInt8](repeating: 7, count: 70), rsv: 0x40)
    let decompressor = FakeDecompressor()
    _ = compressedEvents(bytes, decompressor: decompressor, configuration: configuration)
    #expect(decompressor.received.count == 1)
}

@Test func inflatesInStepsOfTheBudgetAndHoldsTheBytesBehind() {
    let bytes = ClientFrame.make(opcode: 1, Array("abcdefgh".utf8), rsv: 0x40) + ClientFrame.text("next")
    var connection = WebSocketConnection(configuration: WebSocketConfiguration(), decompressor: FakeDecompressor())
    var events: [WebSocketEvent] = []
    var rest = bytes[...]
    var calls = 0
    while !rest.isEmpty || connection.isInflating {
        var budget = 3
        let consumed = rest.withUnsafeBytes { connection.receive($0, into: &events, inflationBudget: &budget) }
        rest = rest.dropFirst(consumed)
        calls += 1
        if connection.isInflating { #expect(events.isEmpty && budget == 0) }
    }
    // The 8 bytes take three calls of 3; the frame behind waits until the message is out.
    #expect(calls == 3)
    #expect(events == [.text(Array("hgfedcba".utf8), compressed: nil), .text(Array("next".utf8), compressed: nil)])
}

@Test func dropsAnUnfinishedInflationAfterOurClose() {
    var connection = WebSocketConnection(configuration: WebSocketConfiguration(), decompressor: FakeDecompressor())
    var events: [WebSocketEvent] = []
    var budget = 2
    let frame = ClientFrame.make(opcode: 2, [1, 2, 3, 4, 5, 6], rsv: 0x40)
    _ = frame.withUnsafeBytes { connection.receive($0, into: &events, inflationBudget: &budget) }
    #expect(connection.isInflating)
    _ = connection.close(code: .goingAway, reason: "")
    budget = 2
    _ = [UInt8]().withUnsafeBytes { connection.receive($0, into: &events, inflationBudget: &budget) }
    #expect(!connection.isInflating)
    #expect(events.isEmpty)
}
