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
