/// Encodes commands as RESP arrays of bulk strings, the form every Redis command takes.
public enum RESPCommand {
    public static func encode(_ arguments: [[UInt8]]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16 + arguments.reduce(0) { $0 + $1.count + 16 })
        bytes.append(UInt8(ascii: "*"))
        bytes += Array(String(arguments.count).utf8)
        bytes += [13, 10]
        for argument in arguments {
            bytes.append(UInt8(ascii: "$"))
            bytes += Array(String(argument.count).utf8)
            bytes += [13, 10]
            bytes += argument
            bytes += [13, 10]
        }
        return bytes
    }

    public static func encode(_ arguments: [String]) -> [UInt8] {
        encode(arguments.map { Array($0.utf8) })
    }
}
