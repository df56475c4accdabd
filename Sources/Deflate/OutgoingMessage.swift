import Bytes
import WebSocket

/// One message on its way to one or many connections, framed at most once per form.
///
/// The plain frame is made once; a compressed frame once per shared deflater (one per window
/// size). Only connections with their own compression stream get a frame of their own. This is
/// the "encode once" of the fan-out path.
///
/// A relayed message that arrived compressed and standing on its own (its sender compresses
/// without context takeover) is not compressed again: for connections that inflate with a 15-bit
/// window, its payload goes out exactly as it came in. Any valid deflate stream reads the same
/// with a 15-bit window, and the server has already inflated it, checking its size and its UTF-8.
public struct OutgoingMessage {
    public let opcode: Opcode
    public let payload: [UInt8]
    /// The payload as the sender compressed it, when it stands alone; nil otherwise.
    private let compressedAsReceived: [UInt8]?
    private var plain: ByteChunk?
    private var compressed: [(deflater: MessageDeflater, frame: ByteChunk)] = []

    /// A message the server wrote (notices, JSON replies and events).
    public init(_ opcode: Opcode, payload: [UInt8]) {
        self.opcode = opcode
        self.payload = payload
        self.compressedAsReceived = nil
    }

    /// A client's message passed on unchanged (`/rooms`, `/echo`): `compressed` is its payload as
    /// received when it stood alone (`WebSocketEvent.text`), which is sent on where it can be.
    public init(relaying opcode: Opcode, payload: [UInt8], compressed: [UInt8]?) {
        self.opcode = opcode
        self.payload = payload
        self.compressedAsReceived = compressed
    }

    /// The frame to queue on a connection with `compression` (nil: none negotiated).
    public mutating func frame(for compression: ConnectionCompression?) -> ByteChunk {
        guard let compression, payload.count >= compression.threshold else { return plainFrame() }
        switch compression.deflater {
        case .own(let deflater):
            return FrameEncoder.frame(opcode, payload: deflater.compress(payload), rsv1: true)
        case .shared(let deflater):
            for entry in compressed where entry.deflater === deflater { return entry.frame }
            let frame = FrameEncoder.frame(
                opcode, payload: reusableCompression(for: compression.parameters) ?? deflater.compress(payload),
                rsv1: true)
            compressed.append((deflater, frame))
            return frame
        }
    }

    /// The message for connections of another event loop: the plain frame made here (now, if
    /// not yet), without this loop's compressed frames, whose deflaters only this loop may use.
    /// The other loop compresses once per window size for its own connections.
    public mutating func forAnotherLoop() -> OutgoingMessage {
        _ = plainFrame()
        var copy = self
        copy.compressed = []
        return copy
    }

    /// The sender's compressed payload, if a connection with `parameters` can read it and it is
    /// smaller than the message.
    private func reusableCompression(for parameters: DeflateParameters) -> [UInt8]? {
        guard parameters.serverMaxWindowBits == 15, let compressedAsReceived, compressedAsReceived.count < payload.count
        else { return nil }
        return compressedAsReceived
    }

    private mutating func plainFrame() -> ByteChunk {
        if let plain { return plain }
        let frame = FrameEncoder.frame(opcode, payload: payload)
        plain = frame
        return frame
    }
}
