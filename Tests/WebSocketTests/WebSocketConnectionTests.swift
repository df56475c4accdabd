import Bytes
import Testing
@testable import WebSocket

/// Expects feeding `bytes` (whole, and byte by byte) to end in exactly the failure for `error`,
/// after the events in `before`.
private func expectFailure(
    _ bytes: [UInt8],
    _ error: WebSocketError,
    after before: [WebSocketEvent] = [],
    configuration: WebSocketConfiguration = WebSocketConfiguration(),
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let expected = before + failureEvents(error)
    #expect(eventsWhole(bytes, configuration: configuration) == expected, sourceLocation: sourceLocation)
    #expect(eventsByteByByte(bytes, configuration: configuration) == expected, sourceLocation: sourceLocation)
}

// MARK: Frames and length forms

@Test func deliversMaskedTextMessage() {
    #expect(eventsByteByByte(ClientFrame.text("Hello")) == [.text(Array("Hello".utf8))])
}

@Test func deliversEmptyMessages() {
    let bytes = ClientFrame.text("") + ClientFrame.binary([])
    #expect(eventsByteByByte(bytes) == [.text([]), .binary([])])
}

@Test(arguments: [0, 1, 125, 126, 127, 0xFFFF])
func deliversBinaryOfEveryShortLengthForm(count: Int) {
    let payload = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7) }
    let bytes = ClientFrame.binary(payload)
    #expect(eventsWhole(bytes) == [.binary(payload)])
    if count <= 127 {
        #expect(eventsByteByByte(bytes) == [.binary(payload)])
    }
}

@Test func deliversSixtyFourBitLengthFrame() {
    let payload = (0..<0x1_0003).map { UInt8(truncatingIfNeeded: $0 &* 13) }
    let bytes = ClientFrame.binary(payload)
    #expect(bytes[1] == 0x80 | 127)
    #expect(eventsWhole(bytes) == [.binary(payload)])
    let chunks = stride(from: 0, to: bytes.count, by: 1000).map { Array(bytes[$0..<min($0 + 1000, bytes.count)]) }
    #expect(events(feeding: chunks) == [.binary(payload)])
}

@Test func acceptsNonMinimalLengthForms() {
    let sixteen = ClientFrame.make(opcode: 2, [1, 2, 3], lengthForm: .sixteen)
    let sixtyFour = ClientFrame.make(opcode: 2, [4, 5], lengthForm: .sixtyFour)
    #expect(eventsByteByByte(sixteen + sixtyFour) == [.binary([1, 2, 3]), .binary([4, 5])])
}

@Test func rejectsSixtyFourBitLengthWithTopBitSet() {
    let header: [UInt8] = [0x82, 0x80 | 127, 0x80, 0, 0, 0, 0, 0, 0, 1] + ClientFrame.defaultMask
    expectFailure(header, .lengthOutOfRange)
}

@Test func rejectsUnmaskedFrame() {
    expectFailure(ClientFrame.make(opcode: 1, Array("hi".utf8), mask: nil), .unmaskedFrame)
}

// MARK: Reserved bits and opcodes

@Test(arguments: [0x40, 0x20, 0x10, 0x70] as [UInt8])
func rejectsReservedBitsWithoutExtension(rsv: UInt8) {
    expectFailure(ClientFrame.make(opcode: 1, Array("a".utf8), rsv: rsv), .reservedBitsSet)
}

@Test(arguments: [3, 4, 5, 6, 7, 0xB, 0xC, 0xD, 0xE, 0xF] as [UInt8])
func rejectsReservedOpcodes(opcode: UInt8) {
    expectFailure(ClientFrame.make(opcode: opcode, []), .reservedOpcode(opcode))
}

// MARK: Control frames

@Test func answersPingWithPongOfSamePayload() {
    let expected: [WebSocketEvent] = [.write(FrameEncoder.frame(.pong, payload: [1, 2, 3]))]
    #expect(eventsByteByByte(ClientFrame.ping([1, 2, 3])) == expected)
    #expect(eventsWhole(ClientFrame.ping([])) == [.write(FrameEncoder.frame(.pong, payload: []))])
    let largest = [UInt8](repeating: 0xEE, count: 125)
    #expect(eventsWhole(ClientFrame.ping(largest)) == [.write(FrameEncoder.frame(.pong, payload: largest))])
}

@Test func reportsPongWithoutReplying() {
    #expect(eventsByteByByte(ClientFrame.pong([9, 9])) == [.pong([9, 9])])
}

@Test func rejectsOversizedControlFrame() {
    expectFailure(ClientFrame.ping([UInt8](repeating: 0, count: 126)), .oversizedControlFrame)
}

@Test func rejectsFragmentedControlFrame() {
    expectFailure(ClientFrame.make(opcode: 9, [1], fin: false), .fragmentedControlFrame)
}

// MARK: Fragmentation

@Test func reassemblesFragmentedMessageWithInterleavedControlFrames() {
    let bytes =
        ClientFrame.text("Hel", fin: false) + ClientFrame.ping(Array("p".utf8))
        + ClientFrame.continuation(Array("lo ".utf8), fin: false) + ClientFrame.pong([7])
        + ClientFrame.continuation(Array("world".utf8))
    let expected: [WebSocketEvent] = [
        .write(FrameEncoder.frame(.pong, payload: Array("p".utf8))),
        .pong([7]),
        .text(Array("Hello world".utf8)),
    ]
    #expect(eventsByteByByte(bytes) == expected)
    #expect(eventsWhole(bytes) == expected)
}

@Test func reassemblesBinaryFromEmptyFragments() {
    let bytes = ClientFrame.binary([], fin: false) + ClientFrame.continuation([1], fin: false) + ClientFrame.continuation([])
    #expect(eventsByteByByte(bytes) == [.binary([1])])
}

@Test func rejectsContinuationWithoutMessage() {
    expectFailure(ClientFrame.continuation([1]), .unexpectedContinuation)
    expectFailure(ClientFrame.text("done") + ClientFrame.continuation([1]), .unexpectedContinuation, after: [.text(Array("done".utf8))])
}

@Test func rejectsNewMessageBeforePreviousFinished() {
    expectFailure(ClientFrame.text("a", fin: false) + ClientFrame.text("b"), .unfinishedMessage)
    expectFailure(ClientFrame.binary([1], fin: false) + ClientFrame.binary([2], fin: false), .unfinishedMessage)
}

// MARK: UTF-8

@Test func acceptsCharacterSplitAcrossFragments() {
    let euro: [UInt8] = [0xE2, 0x82, 0xAC]
    let bytes = ClientFrame.make(opcode: 1, [euro[0]], fin: false) + ClientFrame.continuation([euro[1]], fin: false)
        + ClientFrame.continuation([euro[2]])
    #expect(eventsByteByByte(bytes) == [.text(euro)])
}

@Test func rejectsInvalidTextBeforeMessageEnds() {
    // The first fragment is already impossible: the close must come without the rest.
    expectFailure(ClientFrame.make(opcode: 1, [0x41, 0xF4, 0x90], fin: false), .invalidUTF8)
}

@Test func rejectsInvalidTextBeforeFrameEnds() {
    // Only part of the payload has arrived, but it already holds a surrogate.
    let frame = ClientFrame.make(opcode: 1, [0x41, 0xED, 0xA0, 0x80, 0x41, 0x41, 0x41, 0x41])
    expectFailure(Array(frame.prefix(frame.count - 3)), .invalidUTF8)
}

@Test func rejectsTextTruncatedAtFin() {
    expectFailure(ClientFrame.make(opcode: 1, [0x41, 0xE2, 0x82]), .invalidUTF8)
    expectFailure(ClientFrame.make(opcode: 1, [0xE2], fin: false) + ClientFrame.continuation([0x82]), .invalidUTF8)
}

@Test func doesNotValidateBinaryAsText() {
    #expect(eventsWhole(ClientFrame.binary([0xFF, 0xC0])) == [.binary([0xFF, 0xC0])])
}

// MARK: Violations end everything

@Test func violationProducesOnlyCloseAndNothingAfter() {
    let bytes = ClientFrame.make(opcode: 3, []) + ClientFrame.text("ignored") + ClientFrame.ping([1])
    expectFailure(bytes, .reservedOpcode(3))
    var connection = WebSocketConnection(configuration: WebSocketConfiguration())
    var events: [WebSocketEvent] = []
    bytes.withUnsafeBytes { connection.receive($0, into: &events) }
    events.removeAll()
    ClientFrame.text("later").withUnsafeBytes { connection.receive($0, into: &events) }
    #expect(events.isEmpty)
    #expect(connection.isClosing)
    #expect(connection.close(code: .goingAway, reason: "") == nil)
}

// MARK: Size limits

@Test func rejectsOversizedFrameFromHeaderAlone() {
    let configuration = WebSocketConfiguration(maxMessageSize: 100)
    let frame = ClientFrame.binary([UInt8](repeating: 1, count: 101))
    // Header (4 bytes) and key (4 bytes) only: the verdict needs no payload.
    expectFailure(Array(frame.prefix(8)), .messageTooBig, configuration: configuration)
    #expect(eventsWhole(ClientFrame.binary([UInt8](repeating: 1, count: 100)), configuration: configuration).count == 1)
}

@Test func rejectsMessageWhoseFragmentsExceedLimit() {
    let configuration = WebSocketConfiguration(maxMessageSize: 10)
    let bytes = ClientFrame.binary([UInt8](repeating: 1, count: 6), fin: false) + ClientFrame.continuation([UInt8](repeating: 2, count: 5))
    expectFailure(bytes, .messageTooBig, configuration: configuration)
}

@Test func rejectsFrameBeyondFrameLimit() {
    let configuration = WebSocketConfiguration(maxMessageSize: 100, maxFrameSize: 10)
    #expect(configuration.maxFrameSize == 10)
    expectFailure(ClientFrame.binary([UInt8](repeating: 1, count: 11)), .messageTooBig, configuration: configuration)
    let fragmented = ClientFrame.binary([UInt8](repeating: 1, count: 10), fin: false) + ClientFrame.continuation([UInt8](repeating: 1, count: 10))
    #expect(eventsWhole(fragmented, configuration: configuration) == [.binary([UInt8](repeating: 1, count: 20))])
}
