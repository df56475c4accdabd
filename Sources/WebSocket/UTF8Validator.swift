/// An incremental UTF-8 validator (RFC 3629) that rejects at the first byte that cannot begin
/// or continue a valid sequence.
///
/// Text messages arrive in fragments and reads, and RFC 6455 §8.1 wants the connection failed
/// as soon as invalid text is seen, so the validator keeps its position inside a multi-byte
/// sequence between calls. Runs of ASCII are skipped eight bytes at a time; everything else goes
/// through Björn Höhrmann's DFA: each byte maps to one of 12 classes, and (state, class) gives
/// the next state. The classes are chosen so that overlong forms (C0, C1, E0 80-9F, F0 80-8F),
/// surrogates (ED A0-BF) and code points past U+10FFFF (F4 90-BF, F5-FF) each have a dead end.
public struct UTF8Validator: Sendable {
    /// Between characters: the only state in which the text may end.
    static let accept: UInt8 = 0
    /// An impossible byte was seen; the text can never become valid again.
    static let reject: UInt8 = 12

    /// The DFA state, a multiple of 12 so that `state + class` indexes `transitions` directly.
    private var state: UInt8 = UTF8Validator.accept

    public init() {}

    /// Whether everything fed so far is valid UTF-8 that ends on a character boundary.
    public var isComplete: Bool { state == Self.accept }

    /// Whether an invalid byte has been seen.
    public var hasFailed: Bool { state == Self.reject }

    /// Validates the next piece of text; returns false once the bytes so far cannot be the
    /// start of valid UTF-8 (and keeps returning false).
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var current = state
        guard current != Self.reject else { return false }
        let count = bytes.count
        var index = 0
        Self.classes.withUnsafeBufferPointer { classes in
            Self.transitions.withUnsafeBufferPointer { transitions in
                while index < count {
                    if current == Self.accept {
                        // Between characters, a word without any high bit is eight ASCII bytes:
                        // all valid, and no state change. Four words are OR-ed per step so the
                        // loop runs one branch per 32 bytes of plain text.
                        while index + 32 <= count {
                            let combined =
                                bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                                | bytes.loadUnaligned(fromByteOffset: index + 8, as: UInt64.self)
                                | bytes.loadUnaligned(fromByteOffset: index + 16, as: UInt64.self)
                                | bytes.loadUnaligned(fromByteOffset: index + 24, as: UInt64.self)
                            guard combined & 0x8080_8080_8080_8080 == 0 else { break }
                            index += 32
                        }
                        while index + 8 <= count,
                            bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0
                        {
                            index += 8
                        }
                        while index < count, bytes[index] < 0x80 {
                            index += 1
                        }
                        guard index < count else { return }
                    }
                    current = transitions[Int(current) + Int(classes[Int(bytes[index])])]
                    if current == Self.reject { return }
                    index += 1
                }
            }
        }
        state = current
        return current != Self.reject
    }

    /// Validates the next piece of text held in an array.
    public mutating func feed(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { feed($0) }
    }

    /// Whether `bytes` is, on its own, complete valid UTF-8.
    public static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var validator = UTF8Validator()
        return validator.feed(bytes) && validator.isComplete
    }

    /// Whether `bytes` is, on its own, complete valid UTF-8.
    public static func isValid(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { isValid($0) }
    }

    /// The byte classes: bytes that play the same role in every state share a class, which keeps
    /// the transition table at 9 states x 12 classes.
    static let classes: [UInt8] = (0...255).map { byte -> UInt8 in
        switch byte {
        case 0x00...0x7F: return 0  // ASCII
        case 0x80...0x8F: return 1  // continuation, low range (the only one allowed after F4)
        case 0x90...0x9F: return 9  // continuation, middle range (allowed after ED, not after E0)
        case 0xA0...0xBF: return 7  // continuation, high range (allowed after E0 and F0, not ED)
        case 0xC0, 0xC1: return 8  // would encode ASCII again (overlong): never valid
        case 0xC2...0xDF: return 2  // two-byte lead
        case 0xE0: return 10  // three-byte lead that needs A0-BF next to avoid overlongs
        case 0xED: return 4  // three-byte lead that needs 80-9F next to avoid surrogates
        case 0xE1...0xEF: return 3  // other three-byte leads
        case 0xF0: return 11  // four-byte lead that needs 90-BF next to avoid overlongs
        case 0xF1...0xF3: return 6  // other four-byte leads
        case 0xF4: return 5  // four-byte lead that needs 80-8F next to stay <= U+10FFFF
        default: return 8  // F5-FF: past U+10FFFF, never valid
        }
    }

    /// The transitions, one row of 12 classes per state. States: 0 accept, 12 reject, 24 one
    /// continuation left, 36 two left, 48 after E0, 60 after ED, 72 after F0, 84 after F1-F3,
    /// 96 after F4.
    static let transitions: [UInt8] = [
        // class: 0   1   2   3   4   5   6   7   8   9  10  11
        0, 12, 24, 36, 60, 96, 84, 12, 12, 12, 48, 72,  // accept
        12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12,  // reject
        12, 0, 12, 12, 12, 12, 12, 0, 12, 0, 12, 12,  // one continuation left: any 80-BF
        12, 24, 12, 12, 12, 12, 12, 24, 12, 24, 12, 12,  // two left: any 80-BF
        12, 12, 12, 12, 12, 12, 12, 24, 12, 12, 12, 12,  // after E0: only A0-BF
        12, 24, 12, 12, 12, 12, 12, 12, 12, 24, 12, 12,  // after ED: only 80-9F
        12, 12, 12, 12, 12, 12, 12, 36, 12, 36, 12, 12,  // after F0: only 90-BF
        12, 36, 12, 12, 12, 12, 12, 36, 12, 36, 12, 12,  // after F1-F3: any 80-BF
        12, 36, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12,  // after F4: only 80-8F
    ]
}
