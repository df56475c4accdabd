import JSON

/// The two line formats of a group's folder.
///
/// A segment line is one record: `{"id":"<mid>","value":{...}}`, the message's tree value with
/// sorted keys, or `"value":null` for a deleted message. A record that is not in the segment's
/// id order (see `GroupCatalog.relocated`) says so: `{"id":"<mid>","moved":true,"value":...}`. An index line is
/// `<offset> <length> "<mid>"`: where the record starts in the segment, its length without the
/// newline, and its id as a JSON string, followed by ` "<owner>" "<key>"` when the record has an
/// idempotency key (`IdempotencyFields`); index lines are in id order, so a reader finds a page
/// by binary search and reads it with one `pread`.
enum SegmentFormat {
    /// One entry of a segment's index.
    struct IndexEntry: Sendable, Equatable {
        var id: String
        var offset: Int
        var length: Int
        var key: IdempotencyKey? = nil
    }

    /// Appends a record line (newline included); returns its length without the newline and
    /// where the id stands in `out`, quoted and escaped, for its index line.
    static func appendRecord(
        id: String, value: UnsafeRawBufferPointer?, moved: Bool = false, to out: inout [UInt8]
    ) -> (length: Int, quotedID: Range<Int>) {
        appendRecord(value: value, moved: moved, to: &out) { JSONEncoding.appendEscapedString(id, to: &$0) }
    }

    /// `appendRecord` for an id given as UTF-8 that needs no escaping (no quote, backslash or
    /// control character): it stands between the quotes as it is.
    static func appendRecord(
        plainID id: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer?, to out: inout [UInt8]
    ) -> (length: Int, quotedID: Range<Int>) {
        appendRecord(value: value, moved: false, to: &out) { out in
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: id)
            out.append(UInt8(ascii: "\""))
        }
    }

    private static func appendRecord(
        value: UnsafeRawBufferPointer?, moved: Bool, to out: inout [UInt8], quotingID: (inout [UInt8]) -> Void
    ) -> (length: Int, quotedID: Range<Int>) {
        let start = out.count
        out.append(contentsOf: recordPrefix)
        let idStart = out.count
        quotingID(&out)
        let quotedID = idStart..<out.count
        if moved { out.append(contentsOf: movedKey) }
        out.append(contentsOf: valueKey)
        if let value { out.append(contentsOf: value) } else { out.append(contentsOf: nullValue) }
        out.append(UInt8(ascii: "}"))
        let length = out.count - start
        out.append(0x0A)
        return (length, quotedID)
    }

    /// An index line for a record whose id, quoted and escaped, is `quotedID` (as
    /// `appendRecord` wrote it): the id is escaped once for both lines.
    static func appendIndexLine(offset: Int, length: Int, quotedID: ArraySlice<UInt8>, key: IdempotencyKey?, to out: inout [UInt8]) {
        JSONEncoding.appendInteger(Int64(offset), to: &out)
        out.append(0x20)
        JSONEncoding.appendInteger(Int64(length), to: &out)
        out.append(0x20)
        out.append(contentsOf: quotedID)
        if let key {
            out.append(0x20)
            JSONEncoding.appendEscapedString(key.owner, to: &out)
            out.append(0x20)
            JSONEncoding.appendEscapedString(key.key, to: &out)
        }
        out.append(0x0A)
    }

    /// A parsed record line.
    struct Record {
        var id: String
        /// Nil for a deleted message.
        var value: JSONValue?
        var moved: Bool
    }

    /// A record line's id and value (nil for a deletion); the error is a phrase.
    static func parseRecord(_ line: UnsafeRawBufferPointer) throws(Mutation.DecodingError) -> Record {
        let parsed: JSONValue
        do {
            parsed = try JSONValue.parse(line, limits: .trustedFile)
        } catch {
            throw .init(reason: "\(error)")
        }
        guard let id = parsed["id"]?.stringValue, let value = parsed["value"] else {
            throw .init(reason: "a record needs \"id\" and \"value\"")
        }
        return Record(id: id, value: value.isNull ? JSONValue?.none : value, moved: parsed["moved"] == .bool(true))
    }

    /// Every entry of an index file's bytes; the error names the 1-based line.
    static func parseIndex(_ bytes: [UInt8]) throws(IndexError) -> [IndexEntry] {
        var entries: [IndexEntry] = []
        var lineStart = 0
        var line = 0
        while lineStart < bytes.count {
            line += 1
            guard let newline = bytes[lineStart...].firstIndex(of: 0x0A) else { throw IndexError(line: line) }
            guard let entry = parseIndexLine(bytes[lineStart..<newline]) else { throw IndexError(line: line) }
            entries.append(entry)
            lineStart = newline + 1
        }
        return entries
    }

    struct IndexError: Error {
        var line: Int
    }

    private static func parseIndexLine(_ line: ArraySlice<UInt8>) -> IndexEntry? {
        var position = line.startIndex
        // At most 15 digits: far beyond any segment, and an offset plus a length cannot overflow.
        func number() -> Int? {
            var value = 0
            let start = position
            while position < line.endIndex, position - start < 15, line[position] >= 0x30, line[position] <= 0x39 {
                value = value * 10 + Int(line[position] - 0x30)
                position += 1
            }
            guard position > start, position < line.endIndex, line[position] == 0x20 else { return nil }
            position += 1
            return value
        }
        guard let offset = number(), let length = number() else { return nil }
        var strings: [String] = []
        while position < line.endIndex {
            if !strings.isEmpty {
                guard line[position] == 0x20 else { return nil }
                position += 1
            }
            guard let (string, end) = quotedString(line, from: position) else { return nil }
            strings.append(string)
            position = end
        }
        switch strings.count {
        case 1: return IndexEntry(id: strings[0], offset: offset, length: length)
        case 3: return IndexEntry(id: strings[0], offset: offset, length: length, key: IdempotencyKey(owner: strings[1], key: strings[2]))
        default: return nil
        }
    }

    /// The JSON string starting at `start` and the position after its closing quote.
    private static func quotedString(_ line: ArraySlice<UInt8>, from start: Int) -> (String, Int)? {
        guard start < line.endIndex, line[start] == 0x22 else { return nil }
        var position = start + 1
        var escaped = false
        while position < line.endIndex {
            let byte = line[position]
            if byte == 0x5C {
                escaped = true
                position += 2
                continue
            }
            if byte == 0x22 { break }
            position += 1
        }
        guard position < line.endIndex else { return nil }
        // Push ids need no escapes: take the bytes between the quotes without a parser.
        if !escaped { return (String(decoding: line[(start + 1)..<position], as: UTF8.self), position + 1) }
        guard let string = (try? JSONValue.parse(Array(line[start...position]), limits: .trustedFile))?.stringValue else { return nil }
        return (string, position + 1)
    }

    private static let recordPrefix: [UInt8] = Array(#"{"id":"#.utf8)
    private static let movedKey: [UInt8] = Array(#","moved":true"#.utf8)
    private static let valueKey: [UInt8] = Array(#","value":"#.utf8)
    private static let nullValue: [UInt8] = Array("null".utf8)
}
