/// Eight bytes tested at once (SWAR), for the JSON string scanners' runs of plain bytes.
///
/// A word is loaded little-endian, so its lowest byte is the first in memory.
public enum ByteWord {
    /// The eight bytes at `offset` of `bytes`, which must hold them.
    @inlinable
    public static func load(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> UInt64 {
        UnsafeRawPointer(bytes.baseAddress! + offset).loadUnaligned(as: UInt64.self)
    }

    /// How many bytes of `word`, from the first, come before one that a JSON string must
    /// escape (a quote, a backslash or a byte below 0x20): 8 when none does.
    ///
    /// Each test below sets a byte's high bit where the byte matches, and may set it in a later
    /// byte too (a borrow carries upwards from a match), never in an earlier one: the first bit
    /// set is always a true match.
    @inlinable
    public static func plainPrefix(_ word: UInt64) -> Int {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let quotes = word ^ (ones &* UInt64(ASCII.quote))
        let backslashes = word ^ (ones &* UInt64(ASCII.backslash))
        // (x - n) & ~x has a byte's high bit set where that byte of x was below n (n <= 0x80).
        let controls = (word &- ones &* 0x20) & ~word
        let zeros = (quotes &- ones) & ~quotes | (backslashes &- ones) & ~backslashes
        return ((controls | zeros) & highBits).trailingZeroBitCount >> 3
    }

    /// Whether any of the first `count` bytes of `word` has its high bit set (part of a
    /// multi-byte UTF-8 sequence).
    @inlinable
    public static func hasNonASCII(_ word: UInt64, first count: Int) -> Bool {
        let kept: UInt64 = count >= 8 ? ~0 : (1 << (UInt64(count) * 8)) &- 1
        return word & kept & highBits != 0
    }

    @inlinable static var highBits: UInt64 { 0x8080_8080_8080_8080 }
}
