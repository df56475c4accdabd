import Bytes
import Testing
@testable import WebSocket

@Test func encodesSevenBitLengthFrame() {
    let frame = FrameEncoder.frame(.text, payload: Array("Hello".utf8))
    #expect(frame.array == [0x81, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F])
}

@Test func encodesLargestSevenBitLength() {
    let frame = FrameEncoder.frame(.binary, payload: [UInt8](repeating: 7, count: 125))
    #expect(frame.count == 127)
    #expect(Array(frame.array.prefix(2)) == [0x82, 125])
}

@Test func encodesSixteenBitLengthFrame() {
    let payload = [UInt8](repeating: 0xAB, count: 126)
    let frame = FrameEncoder.frame(.binary, payload: payload)
    #expect(Array(frame.array.prefix(4)) == [0x82, 126, 0x00, 0x7E])
    #expect(Array(frame.array.dropFirst(4)) == payload)

    let largest = FrameEncoder.frame(.binary, payload: [UInt8](repeating: 0, count: 0xFFFF))
    #expect(largest.count == 0xFFFF + 4)
    #expect(Array(largest.array.prefix(4)) == [0x82, 126, 0xFF, 0xFF])
}

@Test func encodesSixtyFourBitLengthFrame() {
    let payload = [UInt8](repeating: 0x5A, count: 0x1_0000)
    let frame = FrameEncoder.frame(.text, payload: payload)
    #expect(frame.count == 0x1_0000 + 10)
    #expect(Array(frame.array.prefix(10)) == [0x81, 127, 0, 0, 0, 0, 0, 0x01, 0x00, 0x00])
    #expect(frame.array.last == 0x5A)
}

@Test func encodesEmptyPayload() {
    #expect(FrameEncoder.frame(.ping, payload: []).array == [0x89, 0x00])
}

@Test func setsFinAndRsv1Bits() {
    #expect(FrameEncoder.frame(.text, payload: [1], fin: false, rsv1: true).array == [0x41, 0x01, 0x01])
    #expect(FrameEncoder.frame(.continuation, payload: [1], fin: true).array == [0x80, 0x01, 0x01])
}

@Test func encodesFromRawBuffer() {
    let payload: [UInt8] = [1, 2, 3]
    let frame = payload.withUnsafeBytes { FrameEncoder.frame(.binary, payload: $0) }
    #expect(frame.array == [0x82, 0x03, 1, 2, 3])
}

@Test func headerSizeFollowsLengthForms() {
    #expect(FrameEncoder.headerSize(payloadCount: 0) == 2)
    #expect(FrameEncoder.headerSize(payloadCount: 125) == 2)
    #expect(FrameEncoder.headerSize(payloadCount: 126) == 4)
    #expect(FrameEncoder.headerSize(payloadCount: 0xFFFF) == 4)
    #expect(FrameEncoder.headerSize(payloadCount: 0x1_0000) == 10)
}

@Test func closeFrameCarriesCodeAndReason() {
    let frame = FrameEncoder.close(.goingAway, reason: "bye")
    #expect(frame.array == [0x88, 0x05, 0x03, 0xE9, 0x62, 0x79, 0x65])
}

@Test func closeReasonIsCutOnCharacterBoundary() {
    // 122 ASCII bytes then a two-byte "é": 124 bytes of reason, one too many; cutting at 123
    // would split the "é", so the whole character goes.
    let reason = String(repeating: "a", count: 122) + "é"
    let frame = FrameEncoder.close(.normalClosure, reason: reason)
    #expect(frame.count == 2 + 2 + 122)
    #expect(frame.array[1] == 124)
    #expect(UTF8Validator.isValid(Array(frame.array.dropFirst(4))))
}

@Test func closeReasonIsCutToControlFrameLimit() {
    let frame = FrameEncoder.close(.normalClosure, reason: String(repeating: "x", count: 300))
    #expect(frame.array[1] == 125)
    #expect(frame.count == 127)
}
