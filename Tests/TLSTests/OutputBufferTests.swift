import Testing
@testable import TLS

@Test func outputBufferGrowsKeepingItsBytesAndHandsThemOverOnce() {
    var buffer = OutputBuffer()
    #expect(buffer.isEmpty && buffer.take() == nil)
    let first: [UInt8] = [1, 2, 3]
    let second = (0..<5000).map { UInt8(truncatingIfNeeded: $0 * 7) }
    buffer.reserve(first.count)
    first.withUnsafeBytes { buffer.append($0) }
    // Past the reserved three bytes: the buffer grows and keeps what it had.
    second.withUnsafeBytes { buffer.append($0) }
    #expect(buffer.count == 5003)
    let chunk = buffer.take()
    #expect(chunk?.array == first + second)
    #expect(buffer.isEmpty && buffer.take() == nil)
    // Usable again after handing its storage over.
    first.withUnsafeBytes { buffer.append($0) }
    #expect(buffer.take()?.array == first)
}

@Test func outputBufferIgnoresEmptyAppends() {
    var buffer = OutputBuffer()
    [UInt8]().withUnsafeBytes { buffer.append($0) }
    #expect(buffer.isEmpty && buffer.take() == nil)
}
