import Deflate
import FuzzSupport
import WebSocket

// The permessage-deflate inflater (Sources/Deflate/MessageInflater.swift) on arbitrary
// compressed messages, one connection's worth at a time.
//
// Input: one configuration byte, then messages, each a two-byte big-endian length and its bytes.
//   bits 0-2  the client's window bits, 8 + value
//   bit 3     client_no_context_takeover
//   bits 4-5  the size limit: 64 B, 1 KiB, 64 KiB or 1 MiB
//
// Invariants: inflating in steps of one output chunk gives what inflating at once gives (a second
// inflater, fed the same messages); no output passes the limit; only a message without context takeover stands
// alone; without context takeover a message inflates the same on a fresh inflater, whatever
// came before (that is what lets connections share one); every inflated message, deflated
// again by our deflater, inflates back to itself. Messages after an error are not fed, as the
// connection would be closed.

let limits = [64, 1024, 1 << 16, 1 << 20]

/// Compresses inflated messages again for the round trip; resets after every message.
let deflater = MessageDeflater(windowBits: 15, noContextTakeover: true, memoryLevel: 8, level: 6)

func inflate(_ inflater: MessageInflater, _ message: [UInt8], limit: Int) -> Result<DecompressedMessage, DecompressionError> {
    Result { () throws(DecompressionError) in try inflater.decompress(message, limit: limit) }
}

/// Resumes a message one output chunk at a time until it is inflated.
func finish(_ inflater: MessageInflater, _ step: DecompressionStep) throws(DecompressionError) -> DecompressedMessage {
    var step = step
    while true {
        switch step {
        case .done(let message): return message
        case .pending(let pending): step = try inflater.resume(pending, budget: 1)
        }
    }
}

Fuzzer.run { data in
    var input = FuzzInput(data)
    let setup = input.byte()
    let windowBits = 8 + Int(setup & 7)
    let noContextTakeover = setup & 8 != 0
    let limit = limits[Int(setup >> 4 & 3)]
    let inflater = MessageInflater(windowBits: windowBits, noContextTakeover: noContextTakeover)
    let stepped = MessageInflater(windowBits: windowBits, noContextTakeover: noContextTakeover)
    for _ in 0..<8 where !input.isEmpty {
        let message = input.lengthPrefixed()
        let result = inflate(inflater, message, limit: limit)
        if noContextTakeover {
            let fresh = inflate(MessageInflater(windowBits: windowBits, noContextTakeover: true), message, limit: limit)
            precondition(result == fresh, "an inflater without context takeover depends on earlier messages")
        }
        let inSteps = Result { () throws(DecompressionError) in try stepped.decompress(message, limit: limit, budget: 1) }
            .flatMap { first in Result { () throws(DecompressionError) in try finish(stepped, first) } }
        precondition(result == inSteps, "inflating in steps of one chunk differs from inflating at once")
        guard case .success(let inflated) = result else { return }
        precondition(inflated.payload.count <= limit, "\(inflated.payload.count) bytes passed the limit of \(limit)")
        precondition(noContextTakeover || !inflated.standsAlone, "a message under context takeover stands alone")
        let again = inflate(MessageInflater(windowBits: 15, noContextTakeover: true), deflater.compress(inflated.payload), limit: limit)
        precondition((try? again.get().payload) == inflated.payload, "deflating and inflating again changed the message")
    }
}
