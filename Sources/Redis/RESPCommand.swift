import Bytes

/// Encodes commands as RESP arrays of bulk strings, the form every Redis command takes.
public enum RESPCommand {
    /// The command as the chunk a connection's write queue sends, written in place: a
    /// cluster node's journal entry carries a loop iteration's changes, and an array encoded
    /// first was copied once more into the chunk (BENCHMARKS.md, "A cluster node's
    /// instructions").
    public static func encode(_ arguments: [[UInt8]]) -> ByteChunk {
        var count = 1 + digits(arguments.count) + 2
        for argument in arguments { count += 1 + digits(argument.count) + 2 + argument.count + 2 }
        return ByteChunk(count: count) { target in
            var offset = 0
            func put(_ byte: UInt8) {
                target[offset] = byte
                offset += 1
            }
            func header(_ type: UInt8, _ number: Int) {
                put(type)
                let width = digits(number)
                var rest = number
                for position in stride(from: offset + width - 1, through: offset, by: -1) {
                    target[position] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
                offset += width
                put(13)
                put(10)
            }
            header(UInt8(ascii: "*"), arguments.count)
            for argument in arguments {
                header(UInt8(ascii: "$"), argument.count)
                argument.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: target[offset...]).copyMemory(from: $0) }
                offset += argument.count
                put(13)
                put(10)
            }
        }
    }

    public static func encode(_ arguments: [String]) -> ByteChunk {
        encode(arguments.map { Array($0.utf8) })
    }

    /// Decimal digits of `number` (at least 0).
    private static func digits(_ number: Int) -> Int {
        var count = 1
        var rest = number
        while rest >= 10 {
            rest /= 10
            count += 1
        }
        return count
    }
}
