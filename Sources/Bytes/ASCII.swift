/// ASCII byte values used by the text protocols (HTTP, JSON).
///
/// Computed and inlinable, so every use compiles to the constant, also across modules (the JSON
/// and HTTP parsers compare bytes against them in their inner loops).
public enum ASCII {
    @inlinable public static var tab: UInt8 { 0x09 }
    @inlinable public static var lineFeed: UInt8 { 0x0A }
    @inlinable public static var carriageReturn: UInt8 { 0x0D }
    @inlinable public static var space: UInt8 { 0x20 }
    @inlinable public static var quote: UInt8 { 0x22 }
    @inlinable public static var plus: UInt8 { 0x2B }
    @inlinable public static var comma: UInt8 { 0x2C }
    @inlinable public static var minus: UInt8 { 0x2D }
    @inlinable public static var period: UInt8 { 0x2E }
    @inlinable public static var slash: UInt8 { 0x2F }
    @inlinable public static var zero: UInt8 { 0x30 }
    @inlinable public static var nine: UInt8 { 0x39 }
    @inlinable public static var colon: UInt8 { 0x3A }
    @inlinable public static var upperE: UInt8 { 0x45 }
    @inlinable public static var openBracket: UInt8 { 0x5B }
    @inlinable public static var backslash: UInt8 { 0x5C }
    @inlinable public static var closeBracket: UInt8 { 0x5D }
    @inlinable public static var e: UInt8 { 0x65 }
    @inlinable public static var f: UInt8 { 0x66 }
    @inlinable public static var n: UInt8 { 0x6E }
    @inlinable public static var t: UInt8 { 0x74 }
    @inlinable public static var openBrace: UInt8 { 0x7B }
    @inlinable public static var closeBrace: UInt8 { 0x7D }

    /// How many bytes the decimal form of `value` takes, a minus sign included.
    ///
    /// Counted without dividing: the number of binary digits times log10(2) (1233 / 4096, a
    /// little above) is the count of decimal digits or one less, and one comparison with a
    /// power of ten tells which. A division per digit was a tenth of writing a send's answer.
    @inlinable
    public static func decimalCount(_ value: Int64) -> Int {
        let magnitude = value.magnitude
        let estimate = ((64 - magnitude.leadingZeroBitCount) &* 1233) &>> 12
        let digits = Swift.max(1, magnitude >= powerOfTen(estimate) ? estimate + 1 : estimate)
        return value < 0 ? digits + 1 : digits
    }

    /// 10 to the power `exponent`, from 0 through 19 (the largest below 2^64).
    @inlinable
    static func powerOfTen(_ exponent: Int) -> UInt64 {
        switch exponent {
        case 0: 1
        case 1: 10
        case 2: 100
        case 3: 1_000
        case 4: 10_000
        case 5: 100_000
        case 6: 1_000_000
        case 7: 10_000_000
        case 8: 100_000_000
        case 9: 1_000_000_000
        case 10: 10_000_000_000
        case 11: 100_000_000_000
        case 12: 1_000_000_000_000
        case 13: 10_000_000_000_000
        case 14: 100_000_000_000_000
        case 15: 1_000_000_000_000_000
        case 16: 10_000_000_000_000_000
        case 17: 100_000_000_000_000_000
        case 18: 1_000_000_000_000_000_000
        default: 10_000_000_000_000_000_000
        }
    }

    /// Writes the decimal form of `value`, `count` (`decimalCount(value)`) bytes, at `start`.
    @inlinable
    public static func writeDecimal(_ value: Int64, count: Int, at start: UnsafeMutableRawPointer) {
        // Digits come out least significant first, so they are written from the end backwards.
        var magnitude = value.magnitude
        var position = count
        repeat {
            position -= 1
            start.storeBytes(of: zero &+ UInt8(magnitude % 10), toByteOffset: position, as: UInt8.self)
            magnitude /= 10
        } while magnitude > 0
        if value < 0 { start.storeBytes(of: minus, as: UInt8.self) }
    }

    /// Lower-cases an ASCII letter; any other byte is returned unchanged.
    @inlinable
    public static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
    }
}

extension String {
    /// The string with ASCII letters lower-cased; other characters are kept as they are.
    public var asciiLowercased: String {
        var utf8 = Array(self.utf8)
        for index in utf8.indices { utf8[index] = ASCII.lowercased(utf8[index]) }
        return String(decoding: utf8, as: UTF8.self)
    }
}
