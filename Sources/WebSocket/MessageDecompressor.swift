/// Per-connection decompression of whole messages, implemented by the Deflate target
/// (permessage-deflate, RFC 7692).
///
/// The WebSocket layer knows nothing of zlib: it only collects the payload of a message whose
/// first frame had RSV1 and hands it over at FIN. The decompressor keeps whatever window state
/// the negotiated parameters require between messages.
public protocol MessageDecompressor: AnyObject {
    /// Inflates one whole compressed message (all its frames' payloads concatenated).
    ///
    /// Throws `.tooLarge` as soon as the output would pass `limit` bytes (before inflating
    /// further), `.corrupt` on bad data.
    func decompress(_ payload: [UInt8], limit: Int) throws(DecompressionError) -> DecompressedMessage
}

/// One inflated message, and whether its compressed form can be passed on as it is.
public struct DecompressedMessage: Sendable, Equatable {
    /// The inflated bytes.
    public var payload: [UInt8]
    /// The compressed payload stands on its own: it references nothing the client sent before
    /// (no context takeover) and is one deflate stream ending on a block boundary. Such a payload
    /// can be sent on unchanged, with RSV1, to any peer that inflates with a 15-bit window and
    /// keeps no window of ours between messages.
    public var standsAlone: Bool

    public init(payload: [UInt8], standsAlone: Bool) {
        self.payload = payload
        self.standsAlone = standsAlone
    }
}

/// Why a compressed message could not be inflated.
public enum DecompressionError: Error, Sendable {
    /// The inflated message would exceed the limit: the connection closes with 1009.
    case tooLarge
    /// The data is not a valid deflate stream: the connection closes with 1007.
    case corrupt
}
