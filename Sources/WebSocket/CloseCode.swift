/// A close status code (RFC 6455 §7.4), as carried in the first two bytes of a close frame.
///
/// A struct rather than an enum because peers may send any registered or private code
/// (3000-4999), and the connection must be able to carry and echo codes it has no name for.
public struct CloseCode: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt16

    @inlinable
    public init(rawValue: UInt16) {
        self.rawValue = rawValue
    }

    /// 1000: the purpose of the connection has been fulfilled.
    @inlinable public static var normalClosure: CloseCode { CloseCode(rawValue: 1000) }
    /// 1001: the server is shutting down or the browser is leaving the page.
    @inlinable public static var goingAway: CloseCode { CloseCode(rawValue: 1001) }
    /// 1002: the peer broke the framing rules.
    @inlinable public static var protocolError: CloseCode { CloseCode(rawValue: 1002) }
    /// 1003: a message of a type this endpoint does not accept (binary on a text-only route).
    @inlinable public static var unsupportedData: CloseCode { CloseCode(rawValue: 1003) }
    /// 1005: never sent; stands for "the close frame carried no code" in reports.
    @inlinable public static var noStatusReceived: CloseCode { CloseCode(rawValue: 1005) }
    /// 1006: never sent; stands for "the TCP connection ended without a close frame" in reports.
    @inlinable public static var abnormalClosure: CloseCode { CloseCode(rawValue: 1006) }
    /// 1007: a text message (or close reason) that is not UTF-8, or undecodable compressed data.
    @inlinable public static var invalidPayload: CloseCode { CloseCode(rawValue: 1007) }
    /// 1008: a policy violation, such as a rate limit or a consumer too slow to keep up.
    @inlinable public static var policyViolation: CloseCode { CloseCode(rawValue: 1008) }
    /// 1009: a frame or message larger than the configured limit.
    @inlinable public static var messageTooBig: CloseCode { CloseCode(rawValue: 1009) }
    /// 1010: the client expected an extension the server did not negotiate.
    @inlinable public static var mandatoryExtension: CloseCode { CloseCode(rawValue: 1010) }
    /// 1011: the server met an unexpected condition.
    @inlinable public static var internalError: CloseCode { CloseCode(rawValue: 1011) }
    /// 1012: the server is restarting.
    @inlinable public static var serviceRestart: CloseCode { CloseCode(rawValue: 1012) }
    /// 1013: the server is overloaded; the client should retry later.
    @inlinable public static var tryAgainLater: CloseCode { CloseCode(rawValue: 1013) }

    /// Whether a peer may send this code in a close frame.
    ///
    /// RFC 6455 §7.4 allows 1000-1003 and 1007-1011 plus 3000-4999 (libraries and private use).
    /// 1012-1014 were registered with IANA after the RFC (service restart, try again later, bad
    /// gateway) and are accepted because this server itself sends 1013. Never valid: below 1000,
    /// 1004 (reserved), 1005/1006/1015 (report-only), and 1016-2999 (reserved for future RFCs).
    public var isValidOnTheWire: Bool {
        switch rawValue {
        case 1000...1003, 1007...1014, 3000...4999:
            return true
        default:
            return false
        }
    }
}

extension CloseCode: CustomStringConvertible {
    public var description: String {
        switch self {
        case .normalClosure: return "1000 (normal closure)"
        case .goingAway: return "1001 (going away)"
        case .protocolError: return "1002 (protocol error)"
        case .unsupportedData: return "1003 (unsupported data)"
        case .noStatusReceived: return "1005 (no status)"
        case .abnormalClosure: return "1006 (abnormal closure)"
        case .invalidPayload: return "1007 (invalid payload)"
        case .policyViolation: return "1008 (policy violation)"
        case .messageTooBig: return "1009 (message too big)"
        case .mandatoryExtension: return "1010 (mandatory extension)"
        case .internalError: return "1011 (internal error)"
        case .serviceRestart: return "1012 (service restart)"
        case .tryAgainLater: return "1013 (try again later)"
        default: return String(rawValue)
        }
    }
}
