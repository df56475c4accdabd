import Bytes
import Testing
@testable import WebSocket

@Test func echoesPeerCloseCodeAndReportsReason() {
    let bytes = ClientFrame.close(code: 1000, reason: Array("bye".utf8))
    let expected: [WebSocketEvent] = [
        .write(FrameEncoder.close(.normalClosure)),
        .closeConnection(code: .normalClosure, reason: "bye"),
    ]
    #expect(eventsByteByByte(bytes) == expected)
    #expect(FrameEncoder.close(.normalClosure).array == [0x88, 0x02, 0x03, 0xE8])
}

@Test(arguments: [1001, 1003, 1011, 3000, 4999] as [UInt16])
func echoesValidCloseCodes(code: UInt16) {
    let expected: [WebSocketEvent] = [
        .write(FrameEncoder.close(CloseCode(rawValue: code))),
        .closeConnection(code: CloseCode(rawValue: code), reason: ""),
    ]
    #expect(eventsWhole(ClientFrame.close(code: code)) == expected)
}

@Test func answersEmptyCloseWithEmptyClose() {
    let expected: [WebSocketEvent] = [
        .write(FrameEncoder.frame(.close, payload: [])),
        .closeConnection(code: .noStatusReceived, reason: ""),
    ]
    #expect(eventsByteByByte(ClientFrame.close(code: nil)) == expected)
}

@Test func rejectsOneByteClosePayload() {
    let expected = failureEvents(.truncatedCloseCode)
    #expect(eventsByteByByte(ClientFrame.make(opcode: 8, [0x03])) == expected)
}

@Test(arguments: [0, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000] as [UInt16])
func rejectsCloseCodesNotAllowedOnTheWire(code: UInt16) {
    #expect(eventsWhole(ClientFrame.close(code: code)) == failureEvents(.invalidCloseCode(code)))
}

@Test func rejectsCloseReasonThatIsNotUTF8() {
    let bytes = ClientFrame.close(code: 1000, reason: [0x41, 0xCE, 0xBA, 0xED, 0xA0, 0x80])
    #expect(eventsByteByByte(bytes) == failureEvents(.invalidCloseReason))
    #expect(CloseCode.invalidPayload == WebSocketError.invalidCloseReason.closeCode)
}

@Test func ignoresInputAfterPeerClose() {
    let bytes = ClientFrame.close(code: 1000) + ClientFrame.text("late") + ClientFrame.ping([1])
    let result = eventsWhole(bytes)
    #expect(result.count == 2)
    #expect(result.last == .closeConnection(code: .normalClosure, reason: ""))
}

@Test func serverInitiatedCloseWaitsForPeerReply() {
    var connection = WebSocketConnection(configuration: WebSocketConfiguration())
    #expect(!connection.isClosing)
    let frame = connection.close(code: .goingAway, reason: "shutdown")
    #expect(frame?.array == FrameEncoder.close(.goingAway, reason: "shutdown").array)
    #expect(connection.isClosing)
    #expect(connection.close(code: .policyViolation, reason: "again") == nil)

    var events: [WebSocketEvent] = []
    let incoming = ClientFrame.text("dropped") + ClientFrame.ping([1]) + ClientFrame.binary([1], fin: false)
        + ClientFrame.continuation([2]) + ClientFrame.close(code: 1001)
    for byte in incoming {
        [byte].withUnsafeBytes { connection.receive($0, into: &events) }
    }
    #expect(events == [.closeConnection(code: .goingAway, reason: "")])
}

@Test func serverInitiatedCloseDropsMessageInProgress() {
    var connection = WebSocketConnection(configuration: WebSocketConfiguration(maxMessageSize: 10))
    var events: [WebSocketEvent] = []
    let first = ClientFrame.text("Hel", fin: false)
    first.withUnsafeBytes { connection.receive($0, into: &events) }
    #expect(connection.close(code: .goingAway, reason: "") != nil)
    // Payload after our close is not buffered, so even an oversized continuation is harmless.
    let rest = ClientFrame.continuation([UInt8](repeating: 0x41, count: 50)) + ClientFrame.close(code: 1000)
    rest.withUnsafeBytes { connection.receive($0, into: &events) }
    #expect(events == [.closeConnection(code: .goingAway, reason: "")])
}

@Test func violationAfterServerCloseSendsNoSecondClose() {
    var connection = WebSocketConnection(configuration: WebSocketConfiguration())
    _ = connection.close(code: .goingAway, reason: "")
    var events: [WebSocketEvent] = []
    ClientFrame.make(opcode: 1, [1], mask: nil).withUnsafeBytes { connection.receive($0, into: &events) }
    #expect(events == [.closeConnection(code: .protocolError, reason: WebSocketError.unmaskedFrame.description)])
}

@Test func closeAfterPeerCloseReturnsNil() {
    var connection = WebSocketConnection(configuration: WebSocketConfiguration())
    var events: [WebSocketEvent] = []
    ClientFrame.close(code: 1000).withUnsafeBytes { connection.receive($0, into: &events) }
    #expect(connection.isClosing)
    #expect(connection.close(code: .goingAway, reason: "") == nil)
}
