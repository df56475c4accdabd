/// Firebase-style push ids: 20 characters that sort, as strings, in creation order.
///
/// The first 8 characters are the millisecond timestamp in base 64 over the alphabet
/// `-0-9A-Z_a-z` (whose ASCII order is the digit order, so string order is numeric order);
/// the other 12 are random. When two ids are made in the same millisecond, or the clock steps
/// back, the random part of the previous id is incremented instead, so ids made by one
/// generator are strictly increasing. Confined to the event loop thread, like the service.
public struct PushIDGenerator: Sendable {
    /// The 64 symbols in ascending ASCII order.
    static let alphabet: [UInt8] = Array("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz".utf8)

    private var lastTime: Int64 = -1
    /// The last id's random part, 12 digits of 6 bits, as two numbers of 6 digits each (the
    /// first 6 in `high`): incremented with a carry, drawn with two calls to the system's
    /// generator (one `getrandom` each) rather than one per digit.
    private var high: UInt64 = 0
    private var low: UInt64 = 0
    private static let sixDigits: UInt64 = 1 << 36

    public init() {}

    /// A generator whose last id was made at `lastTime` with the random part `high`, `low`
    /// (tests: a carry from the low six digits into the high ones).
    init(lastTime: Int64, high: UInt64, low: UInt64) {
        (self.lastTime, self.high, self.low) = (lastTime, high, low)
    }

    /// The lowest id of the time `milliseconds`: every id made earlier sorts below it.
    public static func lowestID(milliseconds: Int64) -> String {
        var bytes = [UInt8](repeating: alphabet[0], count: 20)
        var remaining = UInt64(max(0, milliseconds))
        for index in stride(from: 7, through: 0, by: -1) {
            bytes[index] = alphabet[Int(remaining & 63)]
            remaining >>= 6
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A new id for the time `milliseconds` since the epoch.
    public mutating func next(milliseconds: Int64) -> String {
        var time = milliseconds
        if time <= lastTime {
            // Same millisecond (or the clock went back): keep the previous time and count up,
            // carrying from the last digit, so the new id sorts after the previous one.
            time = lastTime
            low += 1
            if low == Self.sixDigits {
                low = 0
                high += 1
            }
        } else {
            lastTime = time
            var generator = SystemRandomNumberGenerator()
            // Leave headroom so increments within one millisecond never wrap the first digit.
            high = generator.next() & (Self.sixDigits / 2 - 1)
            low = generator.next() & (Self.sixDigits - 1)
        }
        let (high, low) = (high, low)
        // Written straight into the string's storage: one allocation, not an array and a copy.
        return String(unsafeUninitializedCapacity: 20) { bytes in
            Self.alphabet.withUnsafeBufferPointer { alphabet in
                var remaining = UInt64(max(0, time))
                for index in stride(from: 7, through: 0, by: -1) {
                    bytes[index] = alphabet[Int(remaining & 63)]
                    remaining >>= 6
                }
                for index in 0..<6 {
                    let shift = UInt64(30 - 6 * index)
                    bytes[8 + index] = alphabet[Int(high >> shift & 63)]
                    bytes[14 + index] = alphabet[Int(low >> shift & 63)]
                }
            }
            return 20
        }
    }

    /// The creation time encoded in a push id's first 8 characters, or nil if it is not one.
    public static func timestamp(of id: String) -> Int64? {
        let utf8 = Array(id.utf8)
        guard utf8.count == 20 else { return nil }
        var time: Int64 = 0
        for byte in utf8[0..<8] {
            guard let digit = alphabet.firstIndex(of: byte) else { return nil }
            time = time << 6 | Int64(digit)
        }
        return time
    }
}
