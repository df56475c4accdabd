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

@Test func adoptedStorageBecomesTheChunkWithoutACopy() {
    let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: 8, alignment: 16)
    for index in 0..<8 { storage[index] = UInt8(index) }
    let chunk = ByteChunk(adopting: storage, count: 5)
    #expect(chunk.bytes.baseAddress == UnsafeRawPointer(storage.baseAddress))
    #expect(chunk.array == [0, 1, 2, 3, 4])
}
