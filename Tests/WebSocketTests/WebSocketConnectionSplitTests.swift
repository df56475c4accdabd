import Bytes
import Testing
@testable import WebSocket

/// Expects every way of cutting `bytes` in two, and byte-by-byte feeding, to give the events of
/// feeding it whole; returns those events.
@discardableResult
private func expectSameEventsAtEverySplit(
    _ bytes: [UInt8],
    configuration: WebSocketConfiguration = WebSocketConfiguration(),
    sourceLocation: SourceLocation = #_sourceLocation
) -> [WebSocketEvent] {
    let whole = eventsWhole(bytes, configuration: configuration)
    var failingSplits: [Int] = []
    for split in 0...bytes.count {
        let chunks = [Array(bytes[..<split]), Array(bytes[split...])]
        if events(feeding: chunks, configuration: configuration) != whole {
            failingSplits.append(split)
        }
    }
    #expect(failingSplits.isEmpty, sourceLocation: sourceLocation)
    #expect(eventsByteByByte(bytes, configuration: configuration) == whole, sourceLocation: sourceLocation)
    return whole
}

private let fragmentedWithPing =
    ClientFrame.text("Hel", fin: false) + ClientFrame.ping(Array("are you there".utf8))
    + ClientFrame.make(opcode: 0, Array("lo w".utf8) + [0xE2], fin: false) + ClientFrame.pong([1])
    + ClientFrame.continuation([0x82, 0xAC] + Array("rld".utf8))

@Test func splitsOfSeveralFramesOfEveryLengthFormMatchWholeInput() {
    let medium = (0..<300).map { UInt8(truncatingIfNeeded: $0) }
    let long = (0..<200).map { UInt8(truncatingIfNeeded: $0 &* 3) }
    let bytes =
        ClientFrame.text("Hello") + ClientFrame.binary(medium)
        + ClientFrame.make(opcode: 2, long, lengthForm: .sixtyFour) + ClientFrame.binary([])
        + fragmentedWithPing + ClientFrame.close(code: 1000, reason: Array("bye".utf8))
    let whole = expectSameEventsAtEverySplit(bytes)
    #expect(
        whole == [
            .text(Array("Hello".utf8)), .binary(medium), .binary(long), .binary([]),
            .write(FrameEncoder.frame(.pong, payload: Array("are you there".utf8))), .pong([1]),
            .text(Array("Hello w€rld".utf8)),
            .write(FrameEncoder.close(.normalClosure)), .closeConnection(code: .normalClosure, reason: "bye"),
        ])
}

@Test func everyThreeWaySplitOfFragmentedMessageWithPingMatchesWholeInput() {
    let bytes = fragmentedWithPing
    let whole = eventsWhole(bytes)
    #expect(whole.count == 3)
    var failing: [[Int]] = []
    for first in 0...bytes.count {
        for second in first...bytes.count {
            let chunks = [Array(bytes[..<first]), Array(bytes[first..<second]), Array(bytes[second...])]
            if events(feeding: chunks) != whole {
                failing.append([first, second])
            }
        }
    }
    #expect(failing.isEmpty)
}

@Test func splitsOfRealSixtyFourBitFrameMatchWholeInput() {
    let payload = (0..<0x1_0001).map { UInt8(truncatingIfNeeded: $0 &* 11) }
    let bytes = ClientFrame.binary(payload) + ClientFrame.ping([1])
    let whole = eventsWhole(bytes)
    #expect(whole == [.binary(payload), .write(FrameEncoder.frame(.pong, payload: [1]))])
    // Every cut in the header and key, near the end, and a spread through the payload; the
    // every-point case for the 64-bit form is covered above with a short payload.
    let splits = Array(0...20) + Array(stride(from: 21, to: bytes.count - 20, by: 997)) + Array((bytes.count - 20)...bytes.count)
    var failing: [Int] = []
    for split in splits where events(feeding: [Array(bytes[..<split]), Array(bytes[split...])]) != whole {
        failing.append(split)
    }
    #expect(failing.isEmpty)
    #expect(eventsByteByByte(bytes) == whole)
}

@Test func splitsOfFailingInputMatchWholeInput() {
    expectSameEventsAtEverySplit(ClientFrame.text("ok") + ClientFrame.make(opcode: 1, [0x41, 0xC0, 0xAF, 0x41]) + ClientFrame.text("x"))
    expectSameEventsAtEverySplit(ClientFrame.binary([1], fin: false) + ClientFrame.ping([UInt8](repeating: 0, count: 126)))
    expectSameEventsAtEverySplit(
        ClientFrame.binary([UInt8](repeating: 1, count: 40), fin: false) + ClientFrame.continuation([UInt8](repeating: 2, count: 30)),
        configuration: WebSocketConfiguration(maxMessageSize: 64)
    )
}
