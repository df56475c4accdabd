/// Reading frames: header validation, payload unmasking, and what each finished frame does.
extension WebSocketConnection {
    /// Reads (part of) a header from `bytes` and returns how many bytes it used.
    ///
    /// When the whole header is present and nothing is pending it is parsed in place; otherwise
    /// only the bytes still missing are copied into `partialHeader`, so no payload byte is ever
    /// copied there.
    mutating func readHeader(_ bytes: UnsafeRawBufferPointer) throws(WebSocketError) -> Int {
        if partialHeader.isEmpty, let header = FrameHeader.parse(bytes) {
            try begin(header)
            return header.size
        }
        let needed = partialHeader.count < 2 ? 2 : FrameHeader.size(secondByte: partialHeader[1])
        let taken = min(needed - partialHeader.count, bytes.count)
        partialHeader.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[..<taken]))
        let parsed = partialHeader.withUnsafeBytes { FrameHeader.parse($0) }
        if let header = parsed {
            partialHeader.removeAll(keepingCapacity: true)
            try begin(header)
        }
        return taken
    }

    /// Judges a complete header against RFC 6455 and the connection's state, then prepares to
    /// read its payload.
    mutating func begin(_ header: FrameHeader) throws(WebSocketError) {
        guard let opcode = Opcode(rawValue: header.opcodeBits) else {
            throw .reservedOpcode(header.opcodeBits)
        }
        if header.rsv2or3 {
            throw .reservedBitsSet
        }
        guard header.isMasked else {
            throw .unmaskedFrame
        }
        // §5.2: the most significant bit of a 64-bit length must be 0.
        guard header.payloadLength <= UInt64(Int64.max) else {
            throw .lengthOutOfRange
        }
        let length = Int(header.payloadLength)
        if opcode.isControl {
            guard header.fin else { throw .fragmentedControlFrame }
            guard length <= 125 else { throw .oversizedControlFrame }
            guard !header.rsv1 else { throw decompressor == nil ? .reservedBitsSet : .misplacedCompressionBit }
            control.removeAll(keepingCapacity: true)
        } else {
            try beginData(header, opcode: opcode, length: length)
        }
        frame = FrameInProgress(
            opcode: opcode,
            fin: header.fin,
            maskingKey: header.maskingKey,
            remaining: length,
            consumed: 0
        )
        readState = .payload
    }

    /// The data-frame rules: fragmentation order, where RSV1 may appear, and the size limits.
    private mutating func beginData(_ header: FrameHeader, opcode: Opcode, length: Int) throws(WebSocketError) {
        if header.rsv1 {
            guard decompressor != nil else { throw .reservedBitsSet }
            guard opcode != .continuation else { throw .misplacedCompressionBit }
        }
        if opcode == .continuation {
            guard messageOpcode != nil else { throw .unexpectedContinuation }
        } else {
            guard messageOpcode == nil else { throw .unfinishedMessage }
            messageOpcode = opcode
            messageIsCompressed = header.rsv1
            textValidator = UTF8Validator()
        }
        // After our close the payload is dropped, so its size no longer matters.
        guard sentCloseCode == nil else { return }
        // Checked from the header alone, before a single payload byte is buffered. Deflate
        // makes incompressible data slightly larger (stored blocks add 5 bytes per 16 KiB), so
        // a compressed message may pass the limit by that much; its inflated size is checked
        // against the exact limit when it is inflated.
        let slack = messageIsCompressed ? configuration.maxMessageSize / 64 + 1024 : 0
        guard length <= configuration.maxFrameSize + slack,
              length <= configuration.maxMessageSize + slack - message.count
        else {
            throw .messageTooBig
        }
    }

    /// Unmasks the next piece of the current frame's payload into its destination.
    mutating func readPayload(_ piece: UnsafeRawBufferPointer) throws(WebSocketError) {
        let key = frame.maskingKey
        let phase = frame.consumed
        frame.consumed += piece.count
        frame.remaining -= piece.count
        if frame.opcode.isControl {
            let start = control.count
            control.append(contentsOf: piece)
            control.withUnsafeMutableBytes { buffer in
                let target = UnsafeMutableRawBufferPointer(rebasing: buffer[start...])
                key.apply(from: UnsafeRawBufferPointer(target), to: target, phase: phase)
            }
            return
        }
        guard sentCloseCode == nil else { return }
        let start = message.count
        if message.isEmpty {
            // A message's first bytes (often the whole frame) become a new array directly from
            // the read buffer. `Array(_:)` is measured 2-3x faster for small payloads than
            // `init(unsafeUninitializedCapacity:)`, whose unspecialized allocation path looks up
            // generic metadata on every call; the extra in-place pass is over cache-hot bytes.
            message = Array(piece)
        } else {
            message.append(contentsOf: piece)
        }
        message.withUnsafeMutableBytes { buffer in
            let target = UnsafeMutableRawBufferPointer(rebasing: buffer[start...])
            key.apply(from: UnsafeRawBufferPointer(target), to: target, phase: phase)
        }
        if messageOpcode == .text && !messageIsCompressed {
            var validator = textValidator
            let isValid = message.withUnsafeBytes { validator.feed(UnsafeRawBufferPointer(rebasing: $0[start...])) }
            textValidator = validator
            // Fail fast (§8.1): no need to wait for the rest of a message that cannot be text.
            guard isValid else { throw .invalidUTF8 }
        }
    }

    /// Acts on a frame whose payload has been read completely.
    mutating func finishFrame(into events: inout [WebSocketEvent]) throws(WebSocketError) {
        switch frame.opcode {
        case .ping:
            // A ping after our close needs no answer: the peer only waits for our close now.
            guard sentCloseCode == nil else { return }
            events.append(.write(FrameEncoder.frame(.pong, payload: control)))
        case .pong:
            events.append(.pong(control))
        case .close:
            try receiveClose(into: &events)
        case .continuation, .text, .binary:
            if frame.fin {
                try finishMessage(into: &events)
            }
        }
    }

    /// Delivers a complete data message, checked as text if text; a compressed one goes to
    /// `continueInflating` first (`inflating`).
    private mutating func finishMessage(into events: inout [WebSocketEvent]) throws(WebSocketError) {
        let opcode = messageOpcode
        let isCompressed = messageIsCompressed
        let payload = message
        message = []
        messageOpcode = nil
        messageIsCompressed = false
        guard sentCloseCode == nil, let opcode else { return }
        if isCompressed, decompressor != nil {
            inflating = Inflating(opcode: opcode, payload: payload)
            return
        }
        if opcode == .text && !textValidator.isComplete {
            // A multi-byte sequence cut off by the end of the message.
            throw .invalidUTF8
        }
        events.append(opcode == .text ? .text(payload, compressed: nil) : .binary(payload, compressed: nil))
    }

    /// Inflates the compressed message further by about `budget` bytes (decremented), and
    /// delivers it once complete. After our close it is dropped unfinished.
    mutating func continueInflating(into events: inout [WebSocketEvent], budget: inout Int) throws(WebSocketError) {
        guard sentCloseCode == nil, let current = inflating, let decompressor else {
            inflating = nil
            return
        }
        let inflated: DecompressedMessage
        do {
            let step = if let pending = current.pending {
                try decompressor.resume(pending, budget: budget)
            } else {
                try decompressor.decompress(current.payload, limit: configuration.maxMessageSize, budget: budget)
            }
            switch step {
            case .done(let done):
                inflated = done
            case .pending(let pending):
                inflating?.pending = pending
                budget = 0
                return
            }
        } catch .tooLarge {
            throw .messageTooBig
        } catch {
            throw .corruptCompressedMessage
        }
        budget -= min(budget, inflated.payload.count)
        inflating = nil
        if current.opcode == .text && !UTF8Validator.isValid(inflated.payload) {
            throw .invalidUTF8
        }
        let compressed = inflated.standsAlone ? current.payload : nil
        events.append(current.opcode == .text
            ? .text(inflated.payload, compressed: compressed) : .binary(inflated.payload, compressed: compressed))
    }

    /// The closing handshake (§5.5.1, §7.1.5): validates the peer's close, answers it unless we
    /// started the close, and ends the connection.
    private mutating func receiveClose(into events: inout [WebSocketEvent]) throws(WebSocketError) {
        var code = CloseCode.noStatusReceived
        var reason = ""
        if control.count == 1 {
            throw .truncatedCloseCode
        }
        if control.count >= 2 {
            code = CloseCode(rawValue: UInt16(control[0]) << 8 | UInt16(control[1]))
            guard code.isValidOnTheWire else { throw .invalidCloseCode(code.rawValue) }
            let reasonBytes = control[2...]
            guard reasonBytes.withUnsafeBytes({ UTF8Validator.isValid($0) }) else { throw .invalidCloseReason }
            reason = String(decoding: reasonBytes, as: UTF8.self)
        }
        if let sent = sentCloseCode {
            events.append(.closeConnection(code: sent, reason: reason))
        } else {
            sentCloseCode = code
            // Echo the peer's code; a close without a code is answered by one without a code.
            let reply = control.count >= 2 ? FrameEncoder.close(code) : FrameEncoder.frame(.close, payload: [])
            events.append(.write(reply))
            events.append(.closeConnection(code: code, reason: reason))
        }
        finish()
    }
}
