import Bytes
import Testing

/// `ASCII.decimalCount` and `ASCII.writeDecimal` against the standard library's decimal form,
/// at every change of width, both signs and both ends of `Int64`.
@Test func writesDecimalsAsTheStandardLibraryDoes() {
    var values: [Int64] = [0, .max, .min, .max - 1, .min + 1]
    var power: Int64 = 1
    for _ in 0..<18 {
        power *= 10
        values += [power - 1, power, power + 1, -(power - 1), -power, -(power + 1)]
    }
    for value in values {
        let expected = Array(String(value).utf8)
        #expect(ASCII.decimalCount(value) == expected.count, "count of \(value)")
        var written = [UInt8](repeating: 0, count: expected.count + 1)
        written.withUnsafeMutableBytes { ASCII.writeDecimal(value, count: expected.count, at: $0.baseAddress!) }
        #expect(Array(written[..<expected.count]) == expected, "digits of \(value)")
        #expect(written[expected.count] == 0, "nothing written past the digits of \(value)")
    }
}
