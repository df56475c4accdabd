/// An error reply of the JSON protocol: a machine code and a sentence for people.
///
/// The codes are docs/protocol.md's closed list; the messages say what was wrong and what to do.
/// An `internal` error never carries a path, a stack or a secret.
public struct ChatError: Error, Sendable, Equatable, CustomStringConvertible {
    /// docs/protocol.md's error codes.
    public enum Code: String, Sendable {
        case badRequest = "bad_request"
        case unauthorized
        case forbidden
        case notFound = "not_found"
        case conflict
        case tooLarge = "too_large"
        case rateLimited = "rate_limited"
        case unavailable
        case `internal`
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }

    static func missing(_ argument: String, _ kind: String = "a string") -> ChatError {
        ChatError(.badRequest, "`\(argument)` is required and must be \(kind)")
    }

    static let notSignedIn = ChatError(.unauthorized, "sign in first: send `auth` with a token, or `login` or `signup`")
    static let badCredentials = ChatError(.unauthorized, "wrong email or password")
    static let clientIdConflict = ChatError(
        .conflict, "this `clientId` was already used for a message in another group; choose a new one")
    static let badToken = ChatError(.unauthorized, "the token is invalid, expired or revoked; log in again")
    static let noSuchGroup = ChatError(.notFound, "no such group")
    static let notMember = ChatError(.forbidden, "you are not a member of this group")
    static let hashingBusy = ChatError(.rateLimited, "the server is busy checking passwords; try again in a second")
    static let emailTaken = ChatError(.conflict, "this email is already registered; log in instead")
    public static let clusterUnavailable = ChatError(
        .unavailable, "this node cannot reach the cluster's store (Redis) right now; try again in a moment")
    static let storeFailed = ChatError(.unavailable, "the change could not be saved; try again later")
}
