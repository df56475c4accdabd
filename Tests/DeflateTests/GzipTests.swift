import CZlib
import Testing

@testable import Deflate

/// Inflates a gzip member with zlib's own reader (window bits 16 + 15: gzip only).
private func gunzip(_ data: [UInt8]) -> [UInt8]? {
    var stream = z_stream()
    guard CZlib_inflateInit2(&stream, 16 + 15) == Z_OK else { return nil }
    defer { inflateEnd(&stream) }
    var input = data
    var output = [UInt8](repeating: 0, count: 1 << 20)
    let result = input.withUnsafeMutableBufferPointer { inBuffer in
        output.withUnsafeMutableBufferPointer { outBuffer in
            stream.next_in = inBuffer.baseAddress
            stream.avail_in = UInt32(inBuffer.count)
            stream.next_out = outBuffer.baseAddress
            stream.avail_out = UInt32(outBuffer.count)
            return inflate(&stream, Z_FINISH)
        }
    }
    guard result == Z_STREAM_END else { return nil }
    return Array(output[0..<Int(stream.total_out)])
}

@Test func gzipRoundTripsThroughZlibsReader() {
    let text = Array(String(repeating: "<p>chat text</p>\n", count: 500).utf8)
    let compressed = Gzip.compress(text)
    #expect(compressed.prefix(2) == [0x1f, 0x8b])
    #expect(compressed.count < text.count / 10)
    #expect(gunzip(compressed) == text)
}

@Test func gzipOfNothingIsAnEmptyMember() {
    #expect(gunzip(Gzip.compress([])) == [])
}
