import Bytes
import Redis
import Testing

/// Feeds `bytes` in every split into two parts, and one byte at a time, and expects the same
/// values each way.
private func parseEverySplit(_ text: String) throws -> [RESPValue] {
    let bytes = Array(text.utf8)
    var whole = RESPParser()
    var expected: [RESPValue] = []
    try whole.receive(bytes, into: &expected)
    #expect(whole.bufferedBytes == 0)
    for cut in 0...bytes.count {
        var parser = RESPParser()
        var values: [RESPValue] = []
        try parser.receive(Array(bytes[..<cut]), into: &values)
        try parser.receive(Array(bytes[cut...]), into: &values)
        #expect(values == expected, "split at \(cut)")
    }
    var parser = RESPParser()
    var values: [RESPValue] = []
    for byte in bytes { try parser.receive([byte], into: &values) }
    #expect(values == expected)
    return expected
}

@Test func readsEveryTypeByteByByte() throws {
    let values = try parseEverySplit("+OK\r\n-ERR unknown command\r\n:-42\r\n$5\r\nhello\r\n$0\r\n\r\n$-1\r\n*-1\r\n*0\r\n")
    #expect(values == [.simple("OK"), .error("ERR unknown command"), .integer(-42), .bulk(Array("hello".utf8)),
                       .bulk([]), .bulk(nil), .array(nil), .array([])])
}

@Test func readsNestedArraysOfAPubSubMessage() throws {
    let values = try parseEverySplit("*3\r\n$7\r\nmessage\r\n$4\r\nroom\r\n$6\r\na\r\nb\r\n\r\n*2\r\n*1\r\n:1\r\n+x\r\n")
    #expect(values == [
        .array([.bulk(Array("message".utf8)), .bulk(Array("room".utf8)), .bulk(Array("a\r\nb\r\n".utf8))]),
        .array([.array([.integer(1)]), .simple("x")]),
    ])
}

@Test func keepsAnUnfinishedValueForTheNextBytes() throws {
    var parser = RESPParser()
    var values: [RESPValue] = []
    try parser.receive(Array("$10\r\n01234".utf8), into: &values)
    #expect(values.isEmpty)
    #expect(parser.bufferedBytes == 10)
    try parser.receive(Array("56789\r\n:1".utf8), into: &values)
    #expect(values == [.bulk(Array("0123456789".utf8))])
    try parser.receive(Array("\r\n".utf8), into: &values)
    #expect(values == [.bulk(Array("0123456789".utf8)), .integer(1)])
}

@Test func readsIntegersToTheirLimits() throws {
    let values = try parseEverySplit(":9223372036854775807\r\n:-9223372036854775808\r\n:+5\r\n:007\r\n:-0\r\n$+2\r\nab\r\n")
    #expect(values == [.integer(.max), .integer(.min), .integer(5), .integer(7), .integer(0), .bulk(Array("ab".utf8))])
}

@Test func refusesWhatIsNotRESP() {
    for text in ["?x\r\n", ":12a\r\n", "$abc\r\n", "$-2\r\n", "$3\r\nabcXY", "*-5\r\n", "$999999999999\r\n",
                 ":\r\n", ":-\r\n", ":+\r\n", ": 1\r\n", ":1 \r\n", ":9223372036854775808\r\n", ":-9223372036854775809\r\n",
                 "*1\r\n:x\r\n"] {
        var parser = RESPParser()
        var values: [RESPValue] = []
        #expect(throws: RESPParser.Malformed.self, "\(text)") { try parser.receive(Array(text.utf8), into: &values) }
    }
}

@Test func refusesNestingPastTheLimit() {
    var limits = RESPParser.Limits()
    limits.maxDepth = 3
    var parser = RESPParser(limits: limits)
    var values: [RESPValue] = []
    #expect(throws: RESPParser.Malformed.self) { try parser.receive(Array("*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n".utf8), into: &values) }
}

@Test func encodesCommandsAsArraysOfBulkStrings() {
    #expect(RESPCommand.encode(["SET", "k", ""]).array == Array("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n".utf8))
    #expect(RESPCommand.encode([[0, 13, 10]]).array == Array("*1\r\n$3\r\n".utf8) + [0, 13, 10] + [13, 10])
    #expect(RESPCommand.encode([] as [String]).array == Array("*0\r\n".utf8))
}

/// Lengths at every change of width, in the header and in the bulk strings, and back through
/// the parser.
@Test func encodesLengthsOfEveryWidth() throws {
    for length in [0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 12345] {
        let argument = (0..<length).map { UInt8(truncatingIfNeeded: $0) }
        let arguments = Array(repeating: argument, count: length % 13)
        let encoded = RESPCommand.encode(arguments).array
        var expected = Array("*\(arguments.count)\r\n".utf8)
        for argument in arguments { expected += Array("$\(argument.count)\r\n".utf8) + argument + [13, 10] }
        #expect(encoded == expected, "length \(length)")
        var parser = RESPParser()
        var values: [RESPValue] = []
        try parser.receive(encoded, into: &values)
        #expect(values == [.array(arguments.map { .bulk($0) })])
    }
}
