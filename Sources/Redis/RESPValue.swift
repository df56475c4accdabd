/// One RESP2 value (https://redis.io/docs/latest/develop/reference/protocol-spec/): what Redis
/// answers and pushes.
public enum RESPValue: Equatable, Sendable {
    /// `+OK`
    case simple(String)
    /// `-ERR ...`: a command failed; the connection goes on.
    case error(String)
    /// `:42`
    case integer(Int)
    /// `$3 foo`; nil is the null bulk string `$-1`.
    case bulk([UInt8]?)
    /// `*2 ...`; nil is the null array `*-1`.
    case array([RESPValue]?)

    /// The value as text: a simple or bulk string (bulk bytes read as UTF-8).
    public var text: String? {
        switch self {
        case .simple(let text): text
        case .bulk(let bytes?): String(decoding: bytes, as: UTF8.self)
        default: nil
        }
    }

    public var bytes: [UInt8]? {
        switch self {
        case .simple(let text): Array(text.utf8)
        case .bulk(let bytes?): bytes
        default: nil
        }
    }
}

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
