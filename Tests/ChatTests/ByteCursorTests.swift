import Testing
@testable import Chat

/// Writes with a counting cursor, then with a writing one, as the send path does.
private func written(_ body: (inout ByteCursor) -> Void) -> (counted: Int, bytes: [UInt8]) {
    var counter = ByteCursor()
    body(&counter)
    return (counter.count, counter.bytes(body))
}

@Test func aCountingCursorCountsWhatAWritingOneWrites() {
    let (counted, bytes) = written { cursor in
        cursor.write(#"{"a":"#)
        _ = cursor.writeQuoted("caf\u{E9}")
        cursor.write(UnsafeRawBufferPointer(start: nil, count: 0))
        cursor.write("}")
    }
    #expect(bytes == Array(#"{"a":"café"}"#.utf8))
    #expect(counted == bytes.count)
}

@Test func integersAreWrittenAsTheirDecimalDigits() {
    for value: Int64 in [0, 7, 9, 10, 99, 100, -1, -10, 1_795_788_195_509, .max, .min] {
        let (counted, bytes) = written { _ = $0.writeInteger(value) }
        #expect(String(decoding: bytes, as: UTF8.self) == String(value))
        #expect(counted == bytes.count)
    }
}

@Test func writesSayWhereTheirValueLies() {
    var ranges: [Range<Int>] = []
    let (_, bytes) = written { cursor in
        cursor.write("[")
        let quoted = cursor.writeQuoted("ab")
        cursor.write(",")
        let number = cursor.writeInteger(-42)
        cursor.write("]")
        ranges = [quoted, number]
    }
    #expect(bytes == Array(#"["ab",-42]"#.utf8))
    #expect(ranges.map { String(decoding: bytes[$0], as: UTF8.self) } == [#""ab""#, "-42"])
}

@Test func appendingAddsTheBytesAfterWhatIsThere() {
    var counter = ByteCursor()
    counter.write("line\n")
    var out = Array("before\n".utf8)
    counter.append(to: &out) { $0.write("line\n") }
    #expect(out == Array("before\nline\n".utf8))
}

/// `bytes` starts from a copy of zeros it keeps for replies of up to 4 KiB and makes a larger
/// array another way: both write every byte counted, whatever the size.
@Test(arguments: [2, 4095, 4096, 4097, 100_000])
func theBytesOfAnySizeAreAllWritten(size: Int) {
    let text = String(repeating: "x", count: size - 2)
    let (counted, bytes) = written { _ = $0.writeQuoted(text) }
    #expect(counted == size && bytes.count == size)
    #expect(bytes.first == UInt8(ascii: "\"") && bytes.last == UInt8(ascii: "\""))
    #expect(bytes.dropFirst().dropLast().allSatisfy { $0 == UInt8(ascii: "x") })
}
