/// The permessage-deflate parameters agreed in one handshake (RFC 7692 §7.1).
///
/// The server compresses with `serverMaxWindowBits` and `serverNoContextTakeover`; it inflates
/// what the client sends with `clientMaxWindowBits` and `clientNoContextTakeover`.
public struct DeflateParameters: Sendable, Equatable {
    /// The server resets its compressor after every message.
    public var serverNoContextTakeover: Bool
    /// The client resets its compressor after every message, so the inflater may too.
    public var clientNoContextTakeover: Bool
    /// The largest window (in bits) the server may reference when compressing: 8...15.
    public var serverMaxWindowBits: Int
    /// The largest window (in bits) the client may reference when compressing: 8...15.
    public var clientMaxWindowBits: Int

    /// Creates parameters; the defaults are those of a plain `permessage-deflate` offer.
    public init(
        serverNoContextTakeover: Bool = false,
        clientNoContextTakeover: Bool = false,
        serverMaxWindowBits: Int = 15,
        clientMaxWindowBits: Int = 15
    ) {
        self.serverNoContextTakeover = serverNoContextTakeover
        self.clientNoContextTakeover = clientNoContextTakeover
        self.serverMaxWindowBits = serverMaxWindowBits
        self.clientMaxWindowBits = clientMaxWindowBits
    }

    /// Makes the inflater for what this connection's client sends.
    ///
    /// One per connection whose client keeps context. With `clientNoContextTakeover` the inflater
    /// keeps no state between messages, so a server can share one among such connections.
    public func makeInflater() -> MessageInflater {
        MessageInflater(windowBits: clientMaxWindowBits, noContextTakeover: clientNoContextTakeover)
    }

    /// Makes a deflater for what the server sends under these parameters.
    ///
    /// With `serverNoContextTakeover` a deflater is not tied to a connection: connections whose
    /// parameters make the same deflater (same window) can share one, and so share frames.
    public func makeDeflater(configuration: DeflateConfiguration) -> MessageDeflater {
        MessageDeflater(
            windowBits: serverMaxWindowBits,
            noContextTakeover: serverNoContextTakeover,
            memoryLevel: configuration.memoryLevel,
            level: configuration.compressionLevel
        )
    }
}
