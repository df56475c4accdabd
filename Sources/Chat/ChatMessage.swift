/// One stored message, `Messages/<gid>/<mid>`.
///
/// Kept small because a server holds millions: strings share storage with the user index
/// where possible, and `receivedBy` is an empty dictionary (no allocation) until a receipt.
public struct ChatMessage: Sendable, Equatable {
    public var id: String
    public var user: String
    /// Exactly one of `text` and `imageUrl` is set.
    public var text: String?
    public var imageUrl: String?
    public var createdAt: Int64
    public var clientId: String? = nil
    public var receivedBy: [String: Int64] = [:]

    // The memberwise initializer, not one written out: the optimizer builds a message straight
    // in place with it, where an explicit `init` left a copy of every field to retain and a
    // temporary to release on each send.
}
