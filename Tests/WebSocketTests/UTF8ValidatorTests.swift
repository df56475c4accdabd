import Testing
@testable import WebSocket

/// Validates `bytes` in one piece and reports (still possible, complete).
private func check(_ bytes: [UInt8]) -> (feed: Bool, complete: Bool) {
    var validator = UTF8Validator()
    let feed = validator.feed(bytes)
    return (feed, validator.isComplete)
}

@Test func acceptsASCIIAndMultilingualText() {
    #expect(UTF8Validator.isValid(Array("Hello, world! 0123456789 long enough for the fast path".utf8)))
    #expect(UTF8Validator.isValid(Array("κόσμε ünïcödé 日本語 😀 \u{10FFFF}".utf8)))
    #expect(UTF8Validator.isValid([]))
}

@Test func acceptsBoundaryCodePoints() {
    let valid: [[UInt8]] = [
        [0x00], [0x7F], [0xC2, 0x80], [0xDF, 0xBF], [0xE0, 0xA0, 0x80], [0xED, 0x9F, 0xBF],
        [0xEE, 0x80, 0x80], [0xEF, 0xBF, 0xBF], [0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF],
        [0xEF, 0xBB, 0xBF],
    ]
    for bytes in valid {
        #expect(UTF8Validator.isValid(bytes), "\(bytes)")
    }
}

@Test(arguments: [
    [0xF4, 0x90, 0x80, 0x80],  // U+110000, past the last code point
    [0xED, 0xA0, 0x80],  // U+D800, a surrogate
    [0xED, 0xBF, 0xBF],  // U+DFFF, a surrogate
    [0xC0, 0xAF],  // overlong "/"
    [0xC1, 0xBF],  // overlong
    [0xE0, 0x80, 0xAF],  // overlong "/"
    [0xE0, 0x9F, 0xBF],  // overlong
    [0xF0, 0x80, 0x80, 0xAF],  // overlong "/"
    [0xF0, 0x8F, 0xBF, 0xBF],  // overlong
    [0xF8, 0x88, 0x80, 0x80, 0x80],  // five-byte form
    [0xFC, 0x84, 0x80, 0x80, 0x80, 0x80],  // six-byte form
    [0xFE], [0xFF], [0xF5, 0x80, 0x80, 0x80],
    [0x80],  // lone continuation
    [0xBF],
    [0xC2, 0x41],  // lead followed by ASCII
    [0xE1, 0x80, 0xC0],  // bad third byte
    [0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x80],  // invalid after the ASCII fast path
] as [[UInt8]])
func rejectsInvalidSequence(bytes: [UInt8]) {
    let result = check(bytes)
    #expect(!result.feed)
    #expect(!result.complete)
}

@Test(arguments: [[0xC2], [0xE0, 0xA0], [0xF0, 0x90, 0x80], [0xF4], [0x41, 0xE2, 0x82]] as [[UInt8]])
func truncatedSequenceIsPossibleButIncomplete(bytes: [UInt8]) {
    let result = check(bytes)
    #expect(result.feed)
    #expect(!result.complete)
}

@Test func failsAtFirstImpossibleByte() {
    var validator = UTF8Validator()
    let lead = validator.feed([0xF4])
    let pastLastCodePoint = validator.feed([0x90])
    #expect(lead)
    #expect(!pastLastCodePoint)
    #expect(validator.hasFailed)
    // Once failed, valid input cannot repair it.
    let afterFailure = validator.feed([0x41])
    #expect(!afterFailure)
}

@Test func acceptsCharactersSplitAtEveryPoint() {
    let text = Array("a€b😀cé".utf8)
    for split in 0...text.count {
        var validator = UTF8Validator()
        let head = validator.feed(Array(text[..<split]))
        let tail = validator.feed(Array(text[split...]))
        #expect(head && tail && validator.isComplete, "split at \(split)")
    }
    var validator = UTF8Validator()
    var everyByteAccepted = true
    for byte in text {
        everyByteAccepted = validator.feed([byte]) && everyByteAccepted
    }
    #expect(everyByteAccepted)
    #expect(validator.isComplete)
}

/// Whether the validator and the standard library disagree about `bytes`.
private func disagrees(_ bytes: [UInt8]) -> Bool {
    UTF8Validator.isValid(bytes) != (String(validating: bytes, as: UTF8.self) != nil)
}

@Test func agreesWithStandardLibraryOnEveryTwoByteSequence() {
    var mismatches: [[UInt8]] = []
    for first in 0...255 {
        for second in 0...255 where disagrees([UInt8(first), UInt8(second)]) {
            mismatches.append([UInt8(first), UInt8(second)])
        }
    }
    #expect(mismatches.isEmpty)
}

@Test func agreesWithStandardLibraryOnThreeAndFourByteSequences() {
    // Every lead byte; around every continuation-range boundary for the second byte (where
    // overlongs, surrogates and U+10FFFF are decided); range edges for the others.
    let edges: [UInt8] = [0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF]
    let seconds: [UInt8] = [0x00, 0x41, 0xFF] + Array(0x7E...0xC1)
    var mismatches: [[UInt8]] = []
    for first in 0xC0...0xFF {
        for second in seconds {
            for third in edges {
                let three = [UInt8(first), second, third]
                if disagrees(three) { mismatches.append(three) }
                for fourth in [0x80, 0x41] as [UInt8] where disagrees(three + [fourth]) {
                    mismatches.append(three + [fourth])
                }
            }
        }
    }
    #expect(mismatches.isEmpty)
}

@Test func findsInvalidByteAtEveryPositionPastTheASCIIFastPath() {
    var missed: [Int] = []
    for position in 0..<70 {
        var bytes = [UInt8](repeating: 0x61, count: 70)
        bytes[position] = 0xFF
        if UTF8Validator.isValid(bytes) { missed.append(position) }
        bytes[position] = 0xC3
        if position + 1 < bytes.count {
            bytes[position + 1] = 0xA9
            if !UTF8Validator.isValid(bytes) { missed.append(-position) }
        }
    }
    #expect(missed.isEmpty)
}
