/// Why a document was rejected and at which byte.
///
/// Parsing stops at the first problem; `offset` counts bytes from the start of the input, so a
/// human can find the spot with `head -c`.
public struct JSONError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The classes of problem the parser reports.
    public enum Reason: Sendable, Equatable {
        /// The input is longer than `JSONLimits.maxBytes`.
        case tooLarge(limit: Int)
        /// Arrays and objects nest deeper than `JSONLimits.maxDepth`.
        case tooDeep(limit: Int)
        /// The input ended inside a value.
        case unexpectedEnd
        /// A byte that cannot start or continue what the grammar expects here.
        case unexpectedByte(UInt8, expected: String)
        /// A comma right before `]` or `}`.
        case trailingComma
        /// A number with a leading zero such as `012`.
        case leadingZero
        /// A number that does not follow the grammar, such as `-`, `1.` or `1e`.
        case invalidNumber
        /// A number too large for a double.
        case numberOutOfRange
        /// A backslash not followed by one of `"\/bfnrtu`, or a `\u` without four hex digits.
        case invalidEscape
        /// A `\u` escape of a UTF-16 surrogate without its other half.
        case loneSurrogate
        /// A raw control character (below 0x20) inside a string.
        case controlCharacterInString(UInt8)
        /// Bytes inside a string that are not valid UTF-8.
        case invalidUTF8
        /// An object names the same key twice.
        case duplicateKey(String)
        /// Something other than whitespace after the document.
        case trailingData
    }

    /// What was wrong.
    public var reason: Reason
    /// The byte offset where the problem was found.
    public var offset: Int

    /// An error of `reason` at `offset`.
    public init(_ reason: Reason, offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    /// A sentence such as `invalid JSON at byte 7: a comma before a closing bracket`.
    public var description: String {
        "invalid JSON at byte \(offset): \(reasonText)"
    }

    private var reasonText: String {
        switch reason {
        case .tooLarge(let limit):
            return "the document is larger than the limit of \(limit) bytes"
        case .tooDeep(let limit):
            return "arrays and objects nest deeper than the limit of \(limit)"
        case .unexpectedEnd:
            return "the document ends in the middle of a value"
        case .unexpectedByte(let byte, let expected):
            return "found \(Self.show(byte)) where \(expected) was expected"
        case .trailingComma:
            return "a comma before a closing bracket or brace"
        case .leadingZero:
            return "a number may not start with a leading zero"
        case .invalidNumber:
            return "a malformed number"
        case .numberOutOfRange:
            return "a number too large to represent"
        case .invalidEscape:
            return "an invalid backslash escape in a string"
        case .loneSurrogate:
            return "a \\u escape of a UTF-16 surrogate without its pair"
        case .controlCharacterInString(let byte):
            return "control character \(Self.show(byte)) in a string must be escaped"
        case .invalidUTF8:
            return "a string is not valid UTF-8"
        case .duplicateKey(let key):
            return "the key \"\(key)\" appears twice in one object"
        case .trailingData:
            return "unexpected data after the document"
        }
    }

    /// A printable byte as `'x'`, anything else as hex, so the message stays one clean line.
    private static func show(_ byte: UInt8) -> String {
        if byte >= 0x21 && byte < 0x7F {
            return "'\(Character(Unicode.Scalar(byte)))'"
        }
        let hex = String(byte, radix: 16, uppercase: true)
        return "byte 0x" + (byte < 0x10 ? "0" : "") + hex
    }
}
