/// Why a Redis command has no answer, or what Redis answered instead of one.
public enum RedisError: Error, Equatable, Sendable, CustomStringConvertible {
    /// There is no connection to Redis now (it is being made again); the command was not sent,
    /// or was sent and its answer was lost with the connection.
    case unavailable(String)
    /// Redis answered with an error reply (`-ERR ...`, `-NOSCRIPT ...`).
    case reply(String)

    public var description: String {
        switch self {
        case .unavailable(let reason): "Redis unavailable: \(reason)"
        case .reply(let message): "Redis error: \(message)"
        }
    }
}
