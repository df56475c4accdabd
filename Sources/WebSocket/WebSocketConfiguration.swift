/// Limits a connection enforces on what a peer sends.
public struct WebSocketConfiguration: Sendable {
    /// The largest payload one frame may announce; a larger one closes the connection with
    /// 1009 as soon as its header arrives, before any of the payload is buffered.
    public var maxFrameSize: Int

    /// The largest message, counted as the sum of its fragments' payloads and again after
    /// inflation; a larger one closes the connection with 1009.
    public var maxMessageSize: Int

    /// Limits with `maxFrameSize` defaulting to `maxMessageSize`, since a message of one frame
    /// is the common case and a frame cannot usefully exceed its message.
    public init(maxMessageSize: Int = 1 << 20, maxFrameSize: Int? = nil) {
        self.maxMessageSize = maxMessageSize
        self.maxFrameSize = maxFrameSize ?? maxMessageSize
    }
}
