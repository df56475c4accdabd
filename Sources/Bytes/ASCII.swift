/// ASCII byte values used by the text protocols (HTTP, JSON).
public enum ASCII {
    public static let tab: UInt8 = 0x09
    public static let lineFeed: UInt8 = 0x0A
    public static let carriageReturn: UInt8 = 0x0D
    public static let space: UInt8 = 0x20
    public static let quote: UInt8 = 0x22
    public static let colon: UInt8 = 0x3A
    public static let backslash: UInt8 = 0x5C

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
