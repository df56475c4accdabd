import Bytes
import Testing

@Test func chunkKeepsItsBytes() {
    let chunk = ByteChunk([1, 2, 3] as [UInt8])
    #expect(chunk.count == 3)
    #expect(chunk.array == [1, 2, 3])
}

@Test func emptyChunkHasNoBytes() {
    let chunk = ByteChunk([] as [UInt8])
    #expect(chunk.count == 0)
    #expect(chunk.array.isEmpty)
}

@Test func asciiLowercasingLeavesNonLettersAlone() {
    #expect("Sec-WebSocket-Key: ÄB".asciiLowercased == "sec-websocket-key: Äb")
}

@Test func chunkFromArrayAndFromCollectionAgree() {
    let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 * 31) }
    #expect(ByteChunk(bytes).array == bytes)
    #expect(ByteChunk(bytes[10..<20]).array == Array(bytes[10..<20]))
}
