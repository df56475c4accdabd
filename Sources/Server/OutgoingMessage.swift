import Bytes
import Deflate
import WebSocket

/// One message on its way to one or many connections, framed at most once per form.
///
/// The plain frame is made once; a compressed frame once per window size among members that
/// share a deflater (no context takeover). Only members with their own compression stream get
/// a frame of their own. This is the "encode once" of the fan-out path.
struct OutgoingMessage {
    let opcode: Opcode
    let payload: [UInt8]
    private var plain: ByteChunk?
    private var compressed: [(windowBits: Int, frame: ByteChunk)] = []

    init(_ opcode: Opcode, payload: [UInt8]) {
        self.opcode = opcode
        self.payload = payload
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
            opcode, payload: connection.server.sharedDeflater(windowBits: bits).compress(payload), rsv1: true)
        compressed.append((bits, frame))
        return frame
    }

    private mutating func plainFrame() -> ByteChunk {
        if let plain { return plain }
        let frame = FrameEncoder.frame(opcode, payload: payload)
        plain = frame
        return frame
    }
}
