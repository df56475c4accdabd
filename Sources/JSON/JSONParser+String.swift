import Bytes

/// String parsing: escapes, surrogate pairs and UTF-8 validation.
extension JSONParser {
    /// Parses a string starting at the opening quote and returns its value.
    ///
    /// The common case, a string without escapes, is scanned once and turned into a `String`
    /// straight from the input bytes; only strings with a backslash are copied through `scratch`.
    /// Pure ASCII skips UTF-8 validation entirely.
    mutating func parseString() throws(JSONError) -> String {
        let start = index + 1
        let run = try scanPlainRun()
        if run.closed { return String(decoding: UnsafeBufferPointer(rebasing: input[start..<index - 1]), as: UTF8.self) }
        try decodeEscapedString(from: start, sawNonASCII: run.sawNonASCII)
        return String(decoding: scratch, as: UTF8.self)
    }

    /// Checks a string starting at the opening quote as `parseString` does, without making a
    /// `String` of it: the range of its contents (between the quotes), whether it has escapes,
    /// and whether it has bytes outside ASCII (said of a string with escapes without looking).
    mutating func skipString() throws(JSONError) -> (contents: Range<Int>, escaped: Bool, nonASCII: Bool) {
        let start = index + 1
        let run = try scanPlainRun()
        if run.closed { return (start..<index - 1, false, run.sawNonASCII) }
        try decodeEscapedString(from: start, sawNonASCII: run.sawNonASCII)
        return (start..<index - 1, true, true)
    }

    /// Passes over a string from its opening quote up to its closing quote (`closed`, with
    /// `index` past it and the run's UTF-8 checked) or its first backslash (`index` on it).
    private mutating func scanPlainRun() throws(JSONError) -> (closed: Bool, sawNonASCII: Bool) {
        index += 1
        let start = index
        var sawNonASCII = false
        while index < count {
            // Bytes other than a quote, a backslash or a control character are passed over
            // eight at a time, up to the next of those.
            if index + 8 <= count {
                let word = ByteWord.load(input, at: index)
                let plain = ByteWord.plainPrefix(word)
                sawNonASCII = sawNonASCII || ByteWord.hasNonASCII(word, first: plain)
                if plain == 8 {
                    index += 8
                    continue
                }
                index += plain
            }
            let byte = input[index]
            if byte == ASCII.quote {
                if sawNonASCII { try validateUTF8(UnsafeBufferPointer(rebasing: input[start..<index]), offset: start) }
                index += 1
                return (true, sawNonASCII)
            }
            if byte == ASCII.backslash { return (false, sawNonASCII) }
            if byte < 0x20 { throw JSONError(.controlCharacterInString(byte), offset: index) }
            // Bit 7 set marks any byte of a multi-byte UTF-8 sequence.
            sawNonASCII = sawNonASCII || byte & 0x80 != 0
            index += 1
        }
        throw JSONError(.unexpectedEnd, offset: index)
    }

    /// Finishes a string that contains escapes, copying runs and decoded escapes into `scratch`
    /// (its value's UTF-8 once it returns).
    private mutating func decodeEscapedString(from start: Int, sawNonASCII: Bool) throws(JSONError) {
        scratch.removeAll(keepingCapacity: true)
        var runStart = start
        var runHasNonASCII = sawNonASCII
        while index < count {
            let byte = input[index]
            if byte == ASCII.quote || byte == ASCII.backslash {
                let run = UnsafeBufferPointer(rebasing: input[runStart..<index])
                if runHasNonASCII { try validateUTF8(run, offset: runStart) }
                scratch.append(contentsOf: run)
                runHasNonASCII = false
                if byte == ASCII.quote {
                    index += 1
                    return
                }
                try decodeEscape()
                runStart = index
                continue
            }
            if byte < 0x20 { throw JSONError(.controlCharacterInString(byte), offset: index) }
            runHasNonASCII = runHasNonASCII || byte & 0x80 != 0
            index += 1
        }
        throw JSONError(.unexpectedEnd, offset: index)
    }

    /// Decodes one escape starting at the backslash and appends its UTF-8 to `scratch`.
    private mutating func decodeEscape() throws(JSONError) {
        let escapeOffset = index
        index += 1
        guard index < count else { throw JSONError(.unexpectedEnd, offset: index) }
        let letter = input[index]
        index += 1
        switch letter {
        case ASCII.quote, ASCII.backslash, ASCII.slash: scratch.append(letter)
        case 0x62: scratch.append(0x08)  // \b
        case 0x66: scratch.append(0x0C)  // \f
        case 0x6E: scratch.append(0x0A)  // \n
        case 0x72: scratch.append(0x0D)  // \r
        case 0x74: scratch.append(0x09)  // \t
        case 0x75:
            var scalar = UInt32(try readHex4())
            if scalar >= 0xD800 && scalar <= 0xDBFF {
                // A high surrogate is only meaningful followed by `\u` and a low surrogate;
                // together they encode one scalar above the Basic Multilingual Plane.
                guard index + 1 < count, input[index] == ASCII.backslash, input[index + 1] == 0x75 else {
                    throw JSONError(.loneSurrogate, offset: escapeOffset)
                }
                index += 2
                let low = UInt32(try readHex4())
                guard low >= 0xDC00 && low <= 0xDFFF else {
                    throw JSONError(.loneSurrogate, offset: escapeOffset)
                }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if scalar >= 0xDC00 && scalar <= 0xDFFF {
                throw JSONError(.loneSurrogate, offset: escapeOffset)
            }
            appendUTF8(scalar)
        default:
            throw JSONError(.invalidEscape, offset: escapeOffset)
        }
    }

    /// Reads four hex digits of a `\u` escape.
    private mutating func readHex4() throws(JSONError) -> UInt16 {
        guard index + 4 <= count else { throw JSONError(.unexpectedEnd, offset: count) }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = input[index]
            let nibble: UInt8
            switch byte {
            case 0x30...0x39: nibble = byte - 0x30
            case 0x41...0x46: nibble = byte - 0x41 + 10
            case 0x61...0x66: nibble = byte - 0x61 + 10
            default: throw JSONError(.invalidEscape, offset: index)
            }
            value = value << 4 | UInt16(nibble)
            index += 1
        }
        return value
    }

    /// Appends the UTF-8 encoding of a scalar that is known not to be a surrogate.
    private mutating func appendUTF8(_ scalar: UInt32) {
        // The lead byte's high bits announce the sequence length (0, 110, 1110, 11110);
        // continuation bytes carry 6 payload bits under the 10 prefix.
        switch scalar {
        case 0..<0x80:
            scratch.append(UInt8(scalar))
        case 0x80..<0x800:
            scratch.append(UInt8(0xC0 | scalar >> 6))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            scratch.append(UInt8(0xE0 | scalar >> 12))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        default:
            scratch.append(UInt8(0xF0 | scalar >> 18))
            scratch.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    /// Checks that `run` is well-formed UTF-8 (RFC 3629), reporting the offset of the first bad byte.
    ///
    /// Rejects overlong forms, surrogates encoded directly (U+D800...U+DFFF) and scalars above
    /// U+10FFFF, which is exactly what `String(validating:)` would refuse, but with a position.
    func validateUTF8(_ run: UnsafeBufferPointer<UInt8>, offset: Int) throws(JSONError) {
        var i = 0
        let n = run.count
        while i < n {
            let lead = run[i]
            if lead < 0x80 {
                i += 1
                continue
            }
            // Per lead byte: the sequence length and the allowed range of the second byte,
            // which is where overlongs, surrogates and too-large scalars are caught (Table 3-7
            // of the Unicode standard).
            let length: Int
            var low: UInt8 = 0x80
            var high: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; high = 0x9F
            case 0xF0: length = 4; low = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; high = 0x8F
            default: throw JSONError(.invalidUTF8, offset: offset + i)
            }
            guard i + length <= n else { throw JSONError(.invalidUTF8, offset: offset + i) }
            let second = run[i + 1]
            guard second >= low && second <= high else { throw JSONError(.invalidUTF8, offset: offset + i) }
            var k = 2
            while k < length {
                guard run[i + k] & 0xC0 == 0x80 else { throw JSONError(.invalidUTF8, offset: offset + i) }
                k += 1
            }
            i += length
        }
    }
}
