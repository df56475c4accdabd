import Bytes

/// A strict RFC 8259 parser over a contiguous byte buffer.
///
/// Strict means: no comments, no trailing commas, no leading zeros, no raw control characters
/// in strings, no lone UTF-16 surrogates in `\u` escapes, valid UTF-8 only, no duplicate keys,
/// and nothing but whitespace after the document. Every rejection is a `JSONError` carrying the
/// byte offset; a peer's input never traps.
///
/// The parser is a recursive descent over an unsafe pointer: the caller keeps the buffer alive
/// for the duration of `parseDocument()` (the `JSONValue.parse` overloads do this). Recursion
/// depth is bounded by `JSONLimits.maxDepth`, which is what keeps hostile nesting from
/// exhausting the stack. One parser parses one document.
public struct JSONParser {
    /// The document; subscripts are unchecked in release builds, and every read is guarded
    /// by `index < count` first.
    let input: UnsafeBufferPointer<UInt8>
    let count: Int
    var index = 0
    /// The number of arrays and objects currently open around `index`.
    var depth = 0
    let limits: JSONLimits
    /// Reused for strings that contain escapes, so each such string costs one allocation.
    var scratch: [UInt8] = []
    /// The members of every object still open, innermost last, with each key's offset for a
    /// duplicate-key error. An object's members are collected here and only then put into a
    /// dictionary created at its final size: growing a dictionary key by key rehashes it at
    /// every doubling, which made up much of parsing a snapshot of a million small objects.
    var memberStack: [Member] = []

    /// A parser over `bytes`, which must stay valid while `parseDocument()` runs.
    public init(bytes: UnsafeRawBufferPointer, limits: JSONLimits = JSONLimits()) {
        self.input = bytes.bindMemory(to: UInt8.self)
        self.count = bytes.count
        self.limits = limits
    }

    /// Parses the whole buffer as one JSON text.
    public mutating func parseDocument() throws(JSONError) -> JSONValue {
        guard count <= limits.maxBytes else {
            throw JSONError(.tooLarge(limit: limits.maxBytes), offset: limits.maxBytes)
        }
        let value = try parseValue()
        skipWhitespace()
        guard index == count else { throw JSONError(.trailingData, offset: index) }
        return value
    }

    // MARK: Values

    mutating func parseValue() throws(JSONError) -> JSONValue {
        skipWhitespace()
        guard index < count else { throw JSONError(.unexpectedEnd, offset: index) }
        switch input[index] {
        case ASCII.openBrace:
            return try parseObject()
        case ASCII.openBracket:
            return try parseArray()
        case ASCII.quote:
            return .string(try parseString())
        case ASCII.t:
            try expectLiteral(Self.trueLiteral)
            return .bool(true)
        case ASCII.f:
            try expectLiteral(Self.falseLiteral)
            return .bool(false)
        case ASCII.n:
            try expectLiteral(Self.nullLiteral)
            return .null
        case ASCII.minus, ASCII.zero...ASCII.nine:
            return try parseNumber()
        case let byte:
            throw JSONError(.unexpectedByte(byte, expected: "a value"), offset: index)
        }
    }

    private static let trueLiteral: [UInt8] = Array("true".utf8)
    private static let falseLiteral: [UInt8] = Array("false".utf8)
    private static let nullLiteral: [UInt8] = Array("null".utf8)

    private mutating func expectLiteral(_ literal: [UInt8]) throws(JSONError) {
        for expected in literal {
            guard index < count else { throw JSONError(.unexpectedEnd, offset: index) }
            let byte = input[index]
            guard byte == expected else {
                throw JSONError(.unexpectedByte(byte, expected: "a value"), offset: index)
            }
            index += 1
        }
    }

    private mutating func enterContainer() throws(JSONError) {
        depth += 1
        guard depth <= limits.maxDepth else {
            throw JSONError(.tooDeep(limit: limits.maxDepth), offset: index)
        }
    }

    private mutating func parseArray() throws(JSONError) -> JSONValue {
        try enterContainer()
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < count && input[index] == ASCII.closeBracket {
            index += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            elements.append(try parseValue())
            if try !continueContainer(closedBy: ASCII.closeBracket, expected: "',' or ']'") {
                return .array(elements)
            }
        }
    }

    /// After an element or member: consumes a comma (true: another one follows) or the
    /// container's closing byte (false: the container is done).
    private mutating func continueContainer(closedBy closing: UInt8, expected: String) throws(JSONError) -> Bool {
        skipWhitespace()
        guard index < count else { throw JSONError(.unexpectedEnd, offset: index) }
        switch input[index] {
        case ASCII.comma:
            index += 1
            skipWhitespace()
            if index < count && input[index] == closing {
                throw JSONError(.trailingComma, offset: index)
            }
            return true
        case closing:
            index += 1
            depth -= 1
            return false
        case let byte:
            throw JSONError(.unexpectedByte(byte, expected: expected), offset: index)
        }
    }

    private mutating func parseObject() throws(JSONError) -> JSONValue {
        let base = memberStack.count
        try parseMembers()
        return .object(try popMembers(from: base))
    }

    /// Parses the whole buffer as one JSON text and, when it is an object, returns its members
    /// in document order rather than as a dictionary (nil for any other value). Every rule of
    /// `parseDocument()` holds, duplicate keys included. A small object read once, such as a
    /// chat request, is then searched by key without hashing every key twice.
    public mutating func parseDocumentMembers() throws(JSONError) -> [Member]? {
        guard count <= limits.maxBytes else {
            throw JSONError(.tooLarge(limit: limits.maxBytes), offset: limits.maxBytes)
        }
        skipWhitespace()
        guard index < count, input[index] == ASCII.openBrace else {
            _ = try parseDocument()
            return nil
        }
        try parseMembers()
        try Self.checkDistinct(memberStack)
        skipWhitespace()
        guard index == count else { throw JSONError(.trailingData, offset: index) }
        return memberStack
    }

    /// A member of an object, with its key's offset (for a duplicate-key error).
    public typealias Member = (key: String, value: JSONValue, offset: Int)

    /// A member of an object as ranges of the input: its key's bytes (between the quotes) and
    /// its value's, and whether the value is a string without escapes (its contents are then
    /// the bytes between the value's quotes).
    public struct MemberSpan: Sendable, Equatable {
        public let key: Range<Int>
        public let value: Range<Int>
        public let isPlainString: Bool
        /// The value when it is an integer (a request's `id`), as the parser read it to check
        /// it: parsed again from its bytes, it cost a second parser. Other values are not kept
        /// (a `JSONValue` member would make every copy of a span count references).
        public let integer: Int64?
    }

    /// `parseDocumentMembers()` without building the members: every rule of `parseDocument()`
    /// is checked, and the same error thrown, but the top-level object's members come back as
    /// ranges of the input, for a request whose values are read once, if at all. Nil when the
    /// document is not an object or when the ranges cannot say what `parseDocumentMembers()`
    /// would: a key with an escape or a byte outside ASCII (two such keys may be equal as
    /// strings and differ as bytes), or more than 16 members.
    public mutating func parseDocumentSpans() throws(JSONError) -> [MemberSpan]? {
        guard count <= limits.maxBytes else {
            throw JSONError(.tooLarge(limit: limits.maxBytes), offset: limits.maxBytes)
        }
        skipWhitespace()
        guard index < count, input[index] == ASCII.openBrace else { return nil }
        try enterContainer()
        index += 1
        skipWhitespace()
        var spans: [MemberSpan] = []
        if index < count && input[index] == ASCII.closeBrace {
            index += 1
            depth -= 1
        } else {
            spans.reserveCapacity(8)
            while true {
                skipWhitespace()
                guard index < count else { throw JSONError(.unexpectedEnd, offset: index) }
                guard input[index] == ASCII.quote else {
                    throw JSONError(.unexpectedByte(input[index], expected: "a string key"), offset: index)
                }
                let key = try skipString()
                guard !key.escaped && !key.nonASCII else { return nil }
                skipWhitespace()
                guard index < count else { throw JSONError(.unexpectedEnd, offset: index) }
                guard input[index] == ASCII.colon else {
                    throw JSONError(.unexpectedByte(input[index], expected: "':'"), offset: index)
                }
                index += 1
                skipWhitespace()
                let start = index
                var isPlainString = false
                var integer: Int64?
                if index < count && input[index] == ASCII.quote {
                    isPlainString = try !skipString().escaped
                } else if case .integer(let value) = try parseValue() {
                    integer = value
                }
                spans.append(MemberSpan(key: key.contents, value: start..<index, isPlainString: isPlainString, integer: integer))
                if try !continueContainer(closedBy: ASCII.closeBrace, expected: "',' or '}'") { break }
            }
        }
        guard spans.count <= 16 else { return nil }
        for later in spans.indices.dropFirst() {
            let key = UnsafeBufferPointer(rebasing: input[spans[later].key])
            for earlier in 0..<later where UnsafeBufferPointer(rebasing: input[spans[earlier].key]).elementsEqual(key) {
                throw JSONError(.duplicateKey(String(decoding: key, as: UTF8.self)), offset: spans[later].key.lowerBound - 1)
            }
        }
        skipWhitespace()
        guard index == count else { throw JSONError(.trailingData, offset: index) }
        return spans
    }

    /// Throws `duplicateKey` at the second occurrence of a repeated key.
    private static func checkDistinct(_ members: [Member]) throws(JSONError) {
        if members.count <= 16 {
            for later in members.indices.dropFirst() {
                for earlier in 0..<later where members[earlier].key == members[later].key {
                    throw JSONError(.duplicateKey(members[later].key), offset: members[later].offset)
                }
            }
            return
        }
        var seen = Set<String>(minimumCapacity: members.count)
        for member in members where !seen.insert(member.key).inserted {
            throw JSONError(.duplicateKey(member.key), offset: member.offset)
        }
    }

    /// Parses an object from its opening brace, leaving its members on `memberStack`.
    private mutating func parseMembers() throws(JSONError) {
        try enterContainer()
        index += 1
        skipWhitespace()
        if index < count && input[index] == ASCII.closeBrace {
            index += 1
            depth -= 1
            return
        }
        // Room for a request's members at once: grown one by one, the stack of a fresh parser
        // allocated three times for a `send`.
        if memberStack.capacity == 0 { memberStack.reserveCapacity(8) }
        while true {
            skipWhitespace()
            guard index < count else { throw JSONError(.unexpectedEnd, offset: index) }
            guard input[index] == ASCII.quote else {
                throw JSONError(.unexpectedByte(input[index], expected: "a string key"), offset: index)
            }
            let keyOffset = index
            let key = try parseString()
            skipWhitespace()
            guard index < count else { throw JSONError(.unexpectedEnd, offset: index) }
            guard input[index] == ASCII.colon else {
                throw JSONError(.unexpectedByte(input[index], expected: "':'"), offset: index)
            }
            index += 1
            memberStack.append((key, try parseValue(), keyOffset))
            if try !continueContainer(closedBy: ASCII.closeBrace, expected: "',' or '}'") { return }
        }
    }

    /// Moves the members collected since `base` into a dictionary of exactly their number.
    ///
    /// A repeated key is reported at its second occurrence, as it would be if inserted as read.
    private mutating func popMembers(from base: Int) throws(JSONError) -> [String: JSONValue] {
        var members = [String: JSONValue](minimumCapacity: memberStack.count - base)
        let end = memberStack.count
        let duplicate: (key: String, offset: Int)? = memberStack.withUnsafeMutableBufferPointer { stack in
            for position in base..<end {
                // Moved out rather than copied, and the slot refilled with values that own no
                // storage, so a member costs no retain here and no release when it is removed.
                let member = (stack.baseAddress! + position).move()
                (stack.baseAddress! + position).initialize(to: ("", .null, 0))
                if members.updateValue(member.value, forKey: member.key) != nil {
                    return (member.key, member.offset)
                }
            }
            return nil
        }
        if let duplicate { throw JSONError(.duplicateKey(duplicate.key), offset: duplicate.offset) }
        memberStack.removeSubrange(base...)
        return members
    }

    @inline(__always)
    mutating func skipWhitespace() {
        while index < count {
            switch input[index] {
            case ASCII.space, ASCII.tab, ASCII.lineFeed, ASCII.carriageReturn:
                index += 1
            default:
                return
            }
        }
    }

    // MARK: Numbers

    /// Parses `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    ///
    /// Integers without fraction or exponent are accumulated directly into an `Int64` so
    /// timestamps stay exact and avoid a string round trip; the rest (and integers that
    /// overflow) go through the standard library's correctly rounded `Double` parser.
    private mutating func parseNumber() throws(JSONError) -> JSONValue {
        let start = index
        let negative = input[index] == ASCII.minus
        if negative { index += 1 }
        guard index < count else { throw JSONError(.invalidNumber, offset: index) }
        let firstDigit = input[index]
        guard firstDigit >= ASCII.zero && firstDigit <= ASCII.nine else {
            throw JSONError(.invalidNumber, offset: index)
        }
        // Accumulate as a negative magnitude: Int64.min has no positive counterpart.
        var magnitude: Int64 = 0
        var overflow = false
        if firstDigit == ASCII.zero {
            index += 1
            if index < count && input[index] >= ASCII.zero && input[index] <= ASCII.nine {
                throw JSONError(.leadingZero, offset: start)
            }
        } else {
            while index < count, input[index] >= ASCII.zero, input[index] <= ASCII.nine {
                let digit = Int64(input[index] &- ASCII.zero)
                let (times10, o1) = magnitude.multipliedReportingOverflow(by: 10)
                let (next, o2) = times10.subtractingReportingOverflow(digit)
                overflow = overflow || o1 || o2
                magnitude = next
                index += 1
            }
        }
        var isInteger = true
        if index < count && input[index] == ASCII.period {
            isInteger = false
            index += 1
            try skipDigits()
        }
        if index < count && (input[index] == ASCII.e || input[index] == ASCII.upperE) {
            isInteger = false
            index += 1
            if index < count && (input[index] == ASCII.plus || input[index] == ASCII.minus) {
                index += 1
            }
            try skipDigits()
        }
        if isInteger && !overflow {
            if negative { return .integer(magnitude) }
            if magnitude != Int64.min { return .integer(-magnitude) }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: input[start..<index]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            throw JSONError(.numberOutOfRange, offset: start)
        }
        return .number(value)
    }

    /// Skips one or more digits, as the fraction and exponent require.
    private mutating func skipDigits() throws(JSONError) {
        let start = index
        while index < count, input[index] >= ASCII.zero, input[index] <= ASCII.nine {
            index += 1
        }
        guard index > start else { throw JSONError(.invalidNumber, offset: index) }
    }
}
