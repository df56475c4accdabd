/// The server's permessage-deflate policy in one place: it answers a client's offers and hands
/// the connection its compressor and decompressor.
///
/// A connection gets one of three arrangements for each direction:
/// - none: compression is off, or the client made no acceptable offer;
/// - shared per window size: without context takeover no stream outlives a message, so one zlib
///   stream per window size serves every such connection. A room message is then compressed once
///   per window size, not once per member, and such a connection costs about 1 KiB instead of a
///   7 KiB zlib state and a window of its own (40 KiB with a 15-bit window);
/// - its own: with context takeover each message may refer to the previous ones, so the
///   connection keeps a stream of its own, and its frames cannot be shared.
///
/// Confined to the event loop: the shared zlib streams change on every call.
public final class CompressionPolicy {
    public let configuration: DeflateConfiguration
    private var sharedDeflaters: [Int: MessageDeflater] = [:]
    private var sharedInflaters: [Int: MessageInflater] = [:]

    public init(configuration: DeflateConfiguration) {
        self.configuration = configuration
    }

    /// Answers the request's `Sec-WebSocket-Extensions` values: the connection's compression and
    /// the response header value, or nil when compression is off or every offer was declined.
    public func negotiate(offers: [String]) -> (compression: ConnectionCompression, answer: String)? {
        guard configuration.isEnabled, !offers.isEmpty,
              let (parameters, answer) = PerMessageDeflate.negotiate(offers: offers, configuration: configuration)
        else { return nil }
        let deflater: ConnectionCompression.Deflater = parameters.serverNoContextTakeover
            ? .shared(shared(&sharedDeflaters, parameters.serverMaxWindowBits) { parameters.makeDeflater(configuration: configuration) })
            : .own(parameters.makeDeflater(configuration: configuration))
        let inflater = parameters.clientNoContextTakeover
            ? shared(&sharedInflaters, parameters.clientMaxWindowBits) { parameters.makeInflater() }
            : parameters.makeInflater()
        let compression = ConnectionCompression(
            parameters: parameters, deflater: deflater, inflater: inflater, threshold: configuration.threshold)
        return (compression, answer)
    }

    /// The stream cached for `windowBits`, made on first use. Streams without context takeover
    /// are reset after every message, so nothing of one connection is left for the next.
    private func shared<Stream>(_ cache: inout [Int: Stream], _ windowBits: Int, make: () -> Stream) -> Stream {
        if let stream = cache[windowBits] { return stream }
        let stream = make()
        cache[windowBits] = stream
        return stream
    }
}

/// What one connection compresses with and inflates with, as `CompressionPolicy` negotiated it.
///
/// A class, though nothing in it changes: a connection passes its optional compression along
/// with every frame it sends, and copying and destroying an optional of this as a struct (an
/// enum, a class and a few values) went through the runtime's generic value witnesses, some 120
/// instructions per frame on connections that had no compression at all (callgrind,
/// BENCHMARKS.md). An optional reference is a pointer: one retain, one release.
public final class ConnectionCompression {
    /// The server-to-client stream.
    public enum Deflater {
        /// Shared with every connection of the same window size: frames can be shared too.
        case shared(MessageDeflater)
        /// This connection's own stream (server context takeover).
        case own(MessageDeflater)
    }

    public let parameters: DeflateParameters
    public let deflater: Deflater
    /// Inflates what the client sends; shared when the client keeps no context.
    public let inflater: MessageInflater
    /// Messages shorter than this go out uncompressed (`DeflateConfiguration.threshold`).
    public let threshold: Int

    init(parameters: DeflateParameters, deflater: Deflater, inflater: MessageInflater, threshold: Int) {
        self.parameters = parameters
        self.deflater = deflater
        self.inflater = inflater
        self.threshold = threshold
    }
}
