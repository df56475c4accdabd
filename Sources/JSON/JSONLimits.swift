/// Bounds a parser enforces before it trusts a document.
///
/// The defaults suit one WebSocket message from a peer: nesting deeper than 32 is never needed
/// by the protocol and only serves to exhaust the stack; the byte limit is a second fence after
/// the frame size limit. The store raises both for its own files.
public struct JSONLimits: Sendable, Equatable {
    /// The deepest nesting of arrays and objects accepted; the top-level container is depth 1.
    public var maxDepth: Int
    /// The largest document accepted, in bytes.
    public var maxBytes: Int

    /// Limits with the given values; the defaults are 32 levels and 1 MiB.
    public init(maxDepth: Int = 32, maxBytes: Int = 1 << 20) {
        self.maxDepth = maxDepth
        self.maxBytes = maxBytes
    }

    /// Limits for trusted files written by this server: deep enough for any tree, no size cap.
    public static let trustedFile = JSONLimits(maxDepth: 256, maxBytes: Int.max)
}
