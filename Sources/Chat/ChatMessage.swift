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
    public var clientId: String?
    public var receivedBy: [String: Int64]

    public init(id: String, user: String, text: String?, imageUrl: String?, createdAt: Int64,
                clientId: String? = nil, receivedBy: [String: Int64] = [:]) {
        self.id = id
        self.user = user
        self.text = text
        self.imageUrl = imageUrl
        self.createdAt = createdAt
        self.clientId = clientId
        self.receivedBy = receivedBy
    }
}
