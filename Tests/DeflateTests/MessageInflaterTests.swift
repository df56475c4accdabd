import Testing
import WebSocket

@testable import Deflate

/// Chat-like messages of growing size, some repeated, to exercise the window.
private let conversation: [[UInt8]] = [
    #"{"op":"join","room":"general"}"#,
    #"{"op":"message","room":"general","text":"hello everyone, is the meeting at noon?"}"#,
    #"{"op":"message","room":"general","text":"hello everyone, is the meeting at noon?"}"#,
    "",
    String(repeating: #"{"user":"alice","text":"history entry","ts":1714060800123},"#, count: 200),
    #"{"op":"typing","room":"general"}"#,
].map { Array($0.utf8) }

/// Compresses `message` with a fresh stateless deflater.
private func compressed(_ message: [UInt8], level: Int = 6) -> [UInt8] {
    MessageDeflater(windowBits: 15, noContextTakeover: true, memoryLevel: 8, level: level).compress(message)
}

/// Runs `body` and returns the DecompressionError it threw, or nil.
private func decompressionError(_ body: () throws(DecompressionError) -> DecompressedMessage) -> DecompressionError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error
    }
}

@Test func roundTripsWithoutContextTakeover() throws {
    let deflater = MessageDeflater(windowBits: 15, noContextTakeover: true, memoryLevel: 8, level: 1)
    let inflater = MessageInflater(windowBits: 15, noContextTakeover: true)
    for message in conversation {
        #expect(try inflater.decompress(deflater.compress(message), limit: 1 << 20).payload == message)
    }
}

@Test func roundTripsWithContextTakeover() throws {
    // The browser side of a connection: client context takeover on both ends.
    let client = MessageDeflater(windowBits: 15, noContextTakeover: false, memoryLevel: 8, level: 6)
    let inflater = MessageInflater(windowBits: 15, noContextTakeover: false)
    for message in conversation + conversation {
        #expect(try inflater.decompress(client.compress(message), limit: 1 << 20).payload == message)
    }
}

@Test func roundTripsWithSmallerWindows() throws {
    for bits in 8...14 {
        let client = MessageDeflater(windowBits: bits, noContextTakeover: false, memoryLevel: 4, level: 9)
        let inflater = MessageInflater(windowBits: bits, noContextTakeover: false)
        for message in conversation {
            #expect(try inflater.decompress(client.compress(message), limit: 1 << 20).payload == message)
        }
    }
}

@Test func decompressesTheRFC7692Examples() throws {
    let hello = Array("Hello".utf8)
    let keeping = MessageInflater(windowBits: 15, noContextTakeover: false)
    // §7.2.3.1 one message, then §7.2.3.2 the same text again, referring back to the first.
    #expect(try keeping.decompress([0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00], limit: 5).payload == hello)
    #expect(try keeping.decompress([0xF2, 0x00, 0x11, 0x00, 0x00], limit: 5).payload == hello)
    // §7.2.3.3 a stored (uncompressed) block.
    let stored: [UInt8] = [0x00, 0x05, 0x00, 0xFA, 0xFF, 0x48, 0x65, 0x6C, 0x6C, 0x6F, 0x00]
    #expect(try keeping.decompress(stored, limit: 5).payload == hello)
    // §7.2.3.4 a block with BFINAL set ends the stream; the next message starts a new one.
    #expect(try keeping.decompress([0xF3, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00, 0x00], limit: 5).payload == hello)
    #expect(try keeping.decompress([0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00], limit: 5).payload == hello)
    // Leniency: a final block without the extra 00 octet is still a whole message.
    #expect(try keeping.decompress([0xF3, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00], limit: 5).payload == hello)
}

@Test func forgetsTheWindowWithoutContextTakeover() throws {
    let forgetting = MessageInflater(windowBits: 15, noContextTakeover: true)
    #expect(try forgetting.decompress([0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00], limit: 5).payload == Array("Hello".utf8))
    // §7.2.3.2's second message points back into a window that must now be empty.
    #expect(decompressionError { () throws(DecompressionError) in
        try forgetting.decompress([0xF2, 0x00, 0x11, 0x00, 0x00], limit: 5)
    } == .corrupt)
}

@Test func inflatesTheConcatenationOfFragments() throws {
    let message = conversation[4]
    let payload = compressed(message)
    let cuts = [1, payload.count / 3, payload.count - 1]
    let fragments = [payload[..<cuts[0]], payload[cuts[0]..<cuts[1]], payload[cuts[1]..<cuts[2]], payload[cuts[2]...]]
    let reassembled = fragments.reduce(into: [UInt8]()) { $0 += $1 }
    let inflater = MessageInflater(windowBits: 15, noContextTakeover: true)
    #expect(try inflater.decompress(reassembled, limit: message.count).payload == message)
}

@Test func stopsAZipBombAtTheLimit() throws {
    let bomb = compressed([UInt8](repeating: 0, count: 10 << 20), level: 9)
    #expect(bomb.count < 20_000)
    let inflater = MessageInflater(windowBits: 15, noContextTakeover: true)
    #expect(decompressionError { () throws(DecompressionError) in try inflater.decompress(bomb, limit: 1 << 20) } == .tooLarge)
    // The stream was reset, so the inflater still serves the next message.
    #expect(try inflater.decompress(compressed(conversation[1]), limit: 1 << 20).payload == conversation[1])
}

/// Inflates `payload` one step of `budget` at a time: the message and the number of steps.
private func inSteps(
    _ inflater: MessageInflater, _ payload: [UInt8], limit: Int = 1 << 20, budget: Int
) throws(DecompressionError) -> (DecompressedMessage, steps: Int) {
    var step = try inflater.decompress(payload, limit: limit, budget: budget)
    var steps = 1
    while true {
        switch step {
        case .done(let message): return (message, steps)
        case .pending(let pending): step = try inflater.resume(pending, budget: budget)
        }
        steps += 1
    }
}

@Test func inflatesInStepsOfTheBudget() throws {
    let inflater = MessageInflater(windowBits: 15, noContextTakeover: false)
    let client = MessageDeflater(windowBits: 15, noContextTakeover: false, memoryLevel: 8, level: 6)
    for message in conversation + [Array(repeating: 7, count: 300_000)] {
        let (inflated, steps) = try inSteps(inflater, client.compress(message), budget: 1)
        // One output chunk (16 KiB) a step, and the context carried over to the next message.
        #expect(inflated.payload == message)
        #expect(steps == max(1, (message.count + 16383) / 16384))
    }
}

@Test func aSharedInflaterServesOtherMessagesWhileOneIsSetAside() throws {
    let shared = MessageInflater(windowBits: 15, noContextTakeover: true)
    let big = Array(String(repeating: "a long message, inflated in steps; ", count: 4000).utf8)
    guard case .pending(let pending) = try shared.decompress(compressed(big), limit: 1 << 20, budget: 1) else {
        Issue.record("a message of 140 KB inflated in one step of 16 KiB")
        return
    }
    // Another connection's messages go through the same inflater meanwhile.
    for message in conversation {
        #expect(try shared.decompress(compressed(message), limit: 1 << 20).payload == message)
    }
    var step = try shared.resume(pending, budget: 1)
    while case .pending(let next) = step { step = try shared.resume(next, budget: 1) }
    guard case .done(let inflated) = step else { return }
    #expect(inflated.payload == big)
    #expect(inflated.standsAlone)
}

@Test func stopsAZipBombInStepsAtTheLimit() throws {
    let bomb = compressed([UInt8](repeating: 0, count: 10 << 20), level: 9)
    let inflater = MessageInflater(windowBits: 15, noContextTakeover: true)
    var steps = 0
    let error = decompressionError { () throws(DecompressionError) in
        var step = try inflater.decompress(bomb, limit: 1 << 20, budget: 64 * 1024)
        steps = 1
        while case .pending(let pending) = step {
            step = try inflater.resume(pending, budget: 64 * 1024)
            steps += 1
        }
        return try inflater.decompress(bomb, limit: 1 << 20)
    }
    // 16 steps of 64 KiB reach the limit; the 17th finds the byte past it.
    #expect(error == .tooLarge)
    #expect(steps == 16)
    #expect(try inflater.decompress(compressed(conversation[1]), limit: 1 << 20).payload == conversation[1])
}

@Test func acceptsAMessageOfExactlyTheLimit() throws {
    let message = conversation[4]
    let payload = compressed(message)
    let inflater = MessageInflater(windowBits: 15, noContextTakeover: true)
    #expect(try inflater.decompress(payload, limit: message.count).payload == message)
    #expect(decompressionError { () throws(DecompressionError) in
        try inflater.decompress(payload, limit: message.count - 1)
    } == .tooLarge)
    #expect(try inflater.decompress([0x00], limit: 0).payload == [])
    #expect(try inflater.decompress(payload, limit: .max).payload == message)
}

@Test func rejectsCorruptData() throws {
    let payload = compressed(conversation[4])
    let samples: [[UInt8]] = [
        [0xFF, 0xFF, 0xFF],  // block type 3 is reserved
        payload.dropLast(3).map { $0 },  // truncated: ends inside a block
        payload + [0x00, 0x00, 0xFF, 0xFF],  // the sender forgot to strip the trailer
        [0xF3, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00, 0x00, 0x2A],  // bytes after the final block
    ]
    let inflater = MessageInflater(windowBits: 15, noContextTakeover: false)
    for sample in samples {
        #expect(decompressionError { () throws(DecompressionError) in try inflater.decompress(sample, limit: 1 << 20) } == .corrupt)
    }
}

@Test func aMessageStandsAloneOnlyWithoutContextTakeoverAndWithoutAFinalBlock() throws {
    let hello = Array("Hello".utf8)
    let forgetting = MessageInflater(windowBits: 15, noContextTakeover: true)
    #expect(try forgetting.decompress([0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00], limit: 5)
            == DecompressedMessage(payload: hello, standsAlone: true))
    // §7.2.3.4: valid, but a final block and the restart after it are not passed on as they are.
    #expect(try forgetting.decompress([0xF3, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00, 0x00], limit: 5)
            == DecompressedMessage(payload: hello, standsAlone: false))
    #expect(try forgetting.decompress(compressed(conversation[4]), limit: 1 << 20)
            == DecompressedMessage(payload: conversation[4], standsAlone: true))

    // With context takeover a message may point back into earlier ones: never standing alone.
    let keeping = MessageInflater(windowBits: 15, noContextTakeover: false)
    #expect(try keeping.decompress([0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00], limit: 5)
            == DecompressedMessage(payload: hello, standsAlone: false))
}
