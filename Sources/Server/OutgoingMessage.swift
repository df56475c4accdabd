import Bytes
import Deflate
import WebSocket

/// One message on its way to one or many connections, framed at most once per form.
///
/// The plain frame is made once; a compressed frame once per window size among members that
/// share a deflater (no context takeover). Only members with their own compression stream get
/// a frame of their own. This is the "encode once" of the fan-out path.
///
/// A message that arrived compressed and standing on its own (its sender compresses without
/// context takeover) is not compressed again: for members that inflate with a 15-bit window, its
/// payload goes out exactly as it came in. Any valid deflate stream reads the same with a 15-bit
/// window, and the server has already inflated it, checking its size and its UTF-8.
struct OutgoingMessage {
    let opcode: Opcode
    let payload: [UInt8]
    /// The payload as the sender compressed it, when it stands alone; nil otherwise.
    private let compressedAsReceived: [UInt8]?
    private var plain: ByteChunk?
    private var compressed: [(windowBits: Int, frame: ByteChunk)] = []

    init(_ opcode: Opcode, payload: [UInt8], compressedAsReceived: [UInt8]? = nil) {
        self.opcode = opcode
        self.payload = payload
        self.compressedAsReceived = compressedAsReceived
    }

    /// The frame to queue on `connection`.
    mutating func frame(for connection: Connection) -> ByteChunk {
        guard let deflate = connection.deflate, payload.count >= connection.server.configuration.deflate.threshold else {
            return plainFrame()
        }
        if let own = connection.ownDeflater {
            return FrameEncoder.frame(opcode, payload: own.compress(payload), rsv1: true)
        }
        let bits = deflate.serverMaxWindowBits
        for entry in compressed where entry.windowBits == bits { return entry.frame }
        let frame = FrameEncoder.frame(
            opcode, payload: reusableCompression(windowBits: bits)
                ?? connection.server.sharedDeflater(windowBits: bits).compress(payload),
            rsv1: true)
        compressed.append((bits, frame))
        return frame
    }

    /// The sender's compressed payload, if members inflating with `windowBits` can read it and it
    /// is smaller than the message.
    private func reusableCompression(windowBits: Int) -> [UInt8]? {
        guard windowBits == 15, let compressedAsReceived, compressedAsReceived.count < payload.count else { return nil }
        return compressedAsReceived
    }

    private mutating func plainFrame() -> ByteChunk {
        if let plain { return plain }
        let frame = FrameEncoder.frame(opcode, payload: payload)
        plain = frame
        return frame
    }
}
