import Bytes

/// Encodes commands as RESP arrays of bulk strings, the form every Redis command takes.
public enum RESPCommand {
    /// The command as the chunk a connection's write queue sends, written in place: a
    /// cluster node's journal entry carries a loop iteration's changes, and an array encoded
    /// first was copied once more into the chunk (BENCHMARKS.md, "A cluster node's
    /// instructions").
    public static func encode(_ arguments: [[UInt8]]) -> ByteChunk {
        var count = 1 + ASCII.decimalCount(Int64(arguments.count)) + 2
        for argument in arguments { count += 1 + ASCII.decimalCount(Int64(argument.count)) + 2 + argument.count + 2 }
        return ByteChunk(count: count) { target in
            let base = target.baseAddress!
            var offset = 0
            func put(_ byte: UInt8) {
                base.storeBytes(of: byte, toByteOffset: offset, as: UInt8.self)
                offset += 1
            }
            func header(_ type: UInt8, _ number: Int) {
                put(type)
                let width = ASCII.decimalCount(Int64(number))
                ASCII.writeDecimal(Int64(number), count: width, at: base + offset)
                offset += width
                put(ASCII.carriageReturn)
                put(ASCII.lineFeed)
            }
            header(UInt8(ascii: "*"), arguments.count)
            for argument in arguments {
                header(UInt8(ascii: "$"), argument.count)
                argument.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: target[offset...]).copyMemory(from: $0) }
                offset += argument.count
                put(ASCII.carriageReturn)
                put(ASCII.lineFeed)
            }
        }
    }

    public static func encode(_ arguments: [String]) -> ByteChunk {
        encode(arguments.map { Array($0.utf8) })
    }
}
