import Bytes
@testable import WebSocket

/// Builds client frames the way a browser would (masked, minimal length form by default), so
/// tests can feed a connection exactly what it meets on the wire.
enum ClientFrame {
    /// How the payload length is written; `sixtyFour` may encode short payloads too, which lets
    /// split tests cover the 64-bit header form without 64 KiB of payload.
    enum LengthForm {
        case minimal
        case sixteen
        case sixtyFour
    }

    static let defaultMask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]

    /// One frame; `rsv` holds the three reserved bits already in place (0x40, 0x20, 0x10).
    static func make(
        opcode: UInt8,
        _ payload: [UInt8],
        fin: Bool = true,
        rsv: UInt8 = 0,
        mask: [UInt8]? = defaultMask,
        lengthForm: LengthForm = .minimal
    ) -> [UInt8] {
        var frame: [UInt8] = [(fin ? 0x80 : 0) | rsv | opcode]
        let maskBit: UInt8 = mask == nil ? 0 : 0x80
        var form = lengthForm
        if form == .minimal {
            form = payload.count <= 125 ? .minimal : payload.count <= 0xFFFF ? .sixteen : .sixtyFour
        }
        switch form {
        case .minimal:
            frame.append(maskBit | UInt8(payload.count))
        case .sixteen:
            frame.append(maskBit | 126)
            frame.append(UInt8(payload.count >> 8))
            frame.append(UInt8(payload.count & 0xFF))
        case .sixtyFour:
            frame.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) {
                frame.append(UInt8(truncatingIfNeeded: UInt64(payload.count) >> UInt64(shift)))
            }
        }
        guard let mask else { return frame + payload }
        frame += mask
        for (index, byte) in payload.enumerated() {
            frame.append(byte ^ mask[index % 4])
        }
        return frame
    }

    static func text(_ text: String, fin: Bool = true) -> [UInt8] {
        make(opcode: 1, Array(text.utf8), fin: fin)
    }

    static func binary(_ payload: [UInt8], fin: Bool = true) -> [UInt8] {
        make(opcode: 2, payload, fin: fin)
    }

    static func continuation(_ payload: [UInt8], fin: Bool = true) -> [UInt8] {
        make(opcode: 0, payload, fin: fin)
    }

    static func ping(_ payload: [UInt8]) -> [UInt8] {
        make(opcode: 9, payload)
    }

    static func pong(_ payload: [UInt8]) -> [UInt8] {
        make(opcode: 10, payload)
    }

    static func close(code: UInt16?, reason: [UInt8] = []) -> [UInt8] {
        guard let code else { return make(opcode: 8, []) }
        return make(opcode: 8, [UInt8(code >> 8), UInt8(code & 0xFF)] + reason)
    }
}

/// Feeds `chunks` one after another into one fresh connection and returns all events.
func events(
    feeding chunks: [[UInt8]],
    configuration: WebSocketConfiguration = WebSocketConfiguration(),
    decompressor: (any MessageDecompressor)? = nil
) -> [WebSocketEvent] {
    var connection = WebSocketConnection(configuration: configuration, decompressor: decompressor)
    var events: [WebSocketEvent] = []
    for chunk in chunks {
        chunk.withUnsafeBytes { connection.receive($0, into: &events) }
    }
    return events
}

/// Feeds `bytes` in one call.
func eventsWhole(_ bytes: [UInt8], configuration: WebSocketConfiguration = WebSocketConfiguration()) -> [WebSocketEvent] {
    events(feeding: [bytes], configuration: configuration)
}

/// Feeds `bytes` one byte per call.
func eventsByteByByte(_ bytes: [UInt8], configuration: WebSocketConfiguration = WebSocketConfiguration()) -> [WebSocketEvent] {
    events(feeding: bytes.map { [$0] }, configuration: configuration)
}

/// The events a violation must produce: the close frame with its code and reason, then
/// `.closeConnection`, and nothing else.
func failureEvents(_ error: WebSocketError) -> [WebSocketEvent] {
    [
        .write(FrameEncoder.close(error.closeCode, reason: error.description)),
        .closeConnection(code: error.closeCode, reason: error.description),
    ]
}
