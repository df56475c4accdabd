import CZlib
import Testing

@testable import Deflate

/// A compressor configured as the defaults use it: no context takeover, window 15.
private func statelessDeflater(level: Int = 1) -> MessageDeflater {
    MessageDeflater(windowBits: 15, noContextTakeover: true, memoryLevel: 8, level: level)
}

/// Bytes that compress poorly within 250 bytes but repeat 300 bytes later, so only a deflater
/// with a window above 256 bytes finds the repeats.
private func repeatsAtDistance300() -> [UInt8] {
    var generator = SystemRandomNumberGenerator()
    let block = (0..<300).map { _ in UInt8.random(in: 0...255, using: &generator) }
    return Array(repeating: block, count: 20).flatMap { $0 }
}

/// Inflates raw deflate data with a real 2^`windowBits`-byte window, one output byte at a time.
///
/// Within one `inflate` call zlib may also copy from the bytes it has just written, so a single
/// byte of output room leaves only the window to reach back into: any distance beyond
/// 2^windowBits + 1 then fails with "invalid distance too far back".
private func strictInflate(_ data: [UInt8], windowBits: Int32) -> [UInt8]? {
    var stream = z_stream()
    guard CZlib_inflateInit2(&stream, -windowBits) == Z_OK else { return nil }
    defer { inflateEnd(&stream) }
    var input = data + [0x00, 0x00, 0xFF, 0xFF]
    var output: [UInt8] = []
    var byte: UInt8 = 0
    return input.withUnsafeMutableBufferPointer { input -> [UInt8]? in
        stream.next_in = input.baseAddress
        stream.avail_in = UInt32(input.count)
        while stream.avail_in > 0 {
            let code = withUnsafeMutablePointer(to: &byte) { pointer -> Int32 in
                stream.next_out = pointer
                stream.avail_out = 1
                return inflate(&stream, Z_SYNC_FLUSH)
            }
            guard code == Z_OK || code == Z_BUF_ERROR else { return nil }
            if stream.avail_out == 0 { output.append(byte) }
        }
        return output
    }
}

@Test func compressesTheRFC7692HelloExample() {
    let payload = statelessDeflater().compress(Array("Hello".utf8))
    #expect(payload == [0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00])
}

@Test func omitsTheSyncFlushTrailer() throws {
    let inflater = MessageInflater(windowBits: 15, noContextTakeover: true)
    for size in [1, 10, 100, 1000, 100_000] {
        let message = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 / 13) }
        let payload = statelessDeflater().compress(message)
        #expect(payload.suffix(4) != [0x00, 0x00, 0xFF, 0xFF])
        #expect(try inflater.decompress(payload, limit: size).payload == message)
    }
}

@Test func compressesAnEmptyMessageToOneByte() throws {
    let deflater = MessageDeflater(windowBits: 15, noContextTakeover: false, memoryLevel: 8, level: 6)
    _ = deflater.compress(Array("warm the window".utf8))
    #expect(deflater.compress([]) == [0x00])
    let inflater = MessageInflater(windowBits: 15, noContextTakeover: false)
    #expect(try inflater.decompress([0x00], limit: 0).payload == [])
}

@Test func contextTakeoverShrinksARepeatedMessage() {
    let message = Array(#"{"op":"message","room":"general","text":"see you at the meeting"}"#.utf8)
    let keeping = MessageDeflater(windowBits: 15, noContextTakeover: false, memoryLevel: 8, level: 1)
    let first = keeping.compress(message)
    let second = keeping.compress(message)
    #expect(second.count < first.count / 2)

    let forgetting = statelessDeflater()
    #expect(forgetting.compress(message) == forgetting.compress(message))
}

@Test func windowBits8OutputFitsA256ByteWindow() throws {
    let message = repeatsAtDistance300()
    let narrow = MessageDeflater(windowBits: 8, noContextTakeover: true, memoryLevel: 8, level: 9)
    let payload = narrow.compress(message)
    #expect(strictInflate(payload, windowBits: 8) == message)

    // The check can fail: a 1 KiB window reaches 300 bytes back, which a 256-byte window cannot.
    let wider = MessageDeflater(windowBits: 10, noContextTakeover: true, memoryLevel: 8, level: 9)
    let widePayload = wider.compress(message)
    #expect(widePayload.count < payload.count)
    #expect(strictInflate(widePayload, windowBits: 8) == nil)
}

@Test func windowBits8HoldsAcrossMessagesWithContextTakeover() {
    let message = repeatsAtDistance300()
    let deflater = MessageDeflater(windowBits: 8, noContextTakeover: false, memoryLevel: 8, level: 9)
    let payloads = [deflater.compress(message[..<1000].map { $0 }), deflater.compress(message[1000...].map { $0 })]
    #expect(strictInflate(payloads[0] + [0x00, 0x00, 0xFF, 0xFF] + payloads[1], windowBits: 8) == message)
}
