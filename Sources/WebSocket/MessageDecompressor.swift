/// Per-connection decompression of whole messages, implemented by the Deflate target
/// (permessage-deflate, RFC 7692).
///
/// The WebSocket layer knows nothing of zlib: it only collects the payload of a message whose
/// first frame had RSV1 and hands it over at FIN. The decompressor keeps whatever window state
/// the negotiated parameters require between messages.
///
/// A message may be inflated in steps, so that the connection can bound the work of one
/// readiness event: a zip bomb's megabyte is milliseconds of zlib, which would otherwise delay
/// every other socket on the loop. The decompressor may be shared by several connections, so
/// a message left unfinished is a `PendingInflation` that the connection holds.
public protocol MessageDecompressor: AnyObject {
    /// Inflates one whole compressed message (all its frames' payloads concatenated), or about
    /// `budget` bytes of it (whole output chunks, so possibly a little more).
    ///
    /// Throws `.tooLarge` as soon as the output would pass `limit` bytes (before inflating
    /// further), `.corrupt` on bad data. After either, the message is abandoned.
    func decompress(_ payload: [UInt8], limit: Int, budget: Int) throws(DecompressionError) -> DecompressionStep

    /// Inflates about `budget` more bytes of a message `decompress` left pending.
    func resume(_ pending: any PendingInflation, budget: Int) throws(DecompressionError) -> DecompressionStep
}

/// A message whose inflation is unfinished, with whatever the decompressor needs to go on.
public protocol PendingInflation: AnyObject {}

/// Where inflating a message stands after one step.
public enum DecompressionStep {
    case done(DecompressedMessage)
    case pending(any PendingInflation)
}

extension MessageDecompressor {
    /// Inflates one whole compressed message at once.
    public func decompress(_ payload: [UInt8], limit: Int) throws(DecompressionError) -> DecompressedMessage {
        var step = try decompress(payload, limit: limit, budget: Int.max)
        while true {
            switch step {
            case .done(let message): return message
            case .pending(let pending): step = try resume(pending, budget: Int.max)
            }
        }
    }
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
