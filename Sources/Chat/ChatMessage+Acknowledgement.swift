import JSON

/// Where the values of a message's protocol object lie in the bytes it was written into: a
/// `send`'s answer (`ChatMessage.plainAcknowledgement`, `ChatMessage.write(into:group:)`) or a
/// published message's JSON.
///
/// The message's journal line is put together from those bytes: each string is checked or
/// escaped once for both, where writing the line from the message escaped them all again
/// (JSON escaping was the largest item of the send path's profile; BENCHMARKS.md, "One
/// escaping per send").
struct WrittenMessage: Equatable {
    var id: Range<Int>
    var group: Range<Int>
    var user: Range<Int>
    var text: Range<Int>? = nil
    var imageUrl: Range<Int>? = nil
    var createdAt: Range<Int>
    var clientId: Range<Int>? = nil
    var receivedBy: Range<Int>? = nil

    /// Appends the journal line that stores the message in its group, copied from `bytes`,
    /// newline included: byte for byte what `Mutation.set(path: ["Messages", group, id], value:
    /// message.treeValue)` writes, since the line's keys (`op`, `path`, `value`) and the value's
    /// are in sorted order.
    func appendJournalLine(from bytes: [UInt8], to out: inout [UInt8]) {
        bytes.withUnsafeBytes { written in
            var counter = ByteCursor()
            writeJournalLine(from: written, to: &counter)
            counter.append(to: &out) { writeJournalLine(from: written, to: &$0) }
        }
    }

    private func writeJournalLine(from written: UnsafeRawBufferPointer, to cursor: inout ByteCursor) {
        func field(_ key: StaticString, _ range: Range<Int>) {
            cursor.write(key)
            cursor.write(UnsafeRawBufferPointer(rebasing: written[range]))
        }
        field(#"{"op":"set","path":["Messages","#, group)
        field(",", id)
        if let clientId {
            field(#"],"value":{"clientId":"#, clientId)
            field(#","createdAt":"#, createdAt)
        } else {
            field(#"],"value":{"createdAt":"#, createdAt)
        }
        if let imageUrl { field(#","imageUrl":"#, imageUrl) }
        if let text { field(#","message":"#, text) }
        if let receivedBy { field(#","receivedBy":"#, receivedBy) }
        field(#","user":"#, user)
        cursor.write("}}\n")
    }
}

extension ChatMessage {
    /// The answer to a `send` that stored this message, byte for byte as
    /// `ChatService.writtenAcknowledgement` writes it, in one allocation (`ByteCursor`); nil
    /// when a string in it would need escaping or a value is not plain (a request `id` other
    /// than an integer, receipts), which that one writes.
    func plainAcknowledgement(
        _ requestID: JSONValue?, group: String
    ) -> (bytes: [UInt8], message: Range<Int>, written: WrittenMessage)? {
        let number: Int64?
        switch requestID {
        case nil: number = nil
        case .integer(let value)?: number = value
        default: return nil
        }
        guard receivedBy.isEmpty, Self.isPlain(id), Self.isPlain(group), Self.isPlain(user), Self.isPlain(text),
            Self.isPlain(imageUrl), Self.isPlain(clientId)
        else { return nil }
        var counter = ByteCursor()
        let (object, written) = writeAcknowledgement(number, group: group, to: &counter)
        let bytes = counter.bytes { _ = writeAcknowledgement(number, group: group, to: &$0) }
        return (bytes, object, written)
    }

    private func writeAcknowledgement(
        _ number: Int64?, group: String, to cursor: inout ByteCursor
    ) -> (object: Range<Int>, written: WrittenMessage) {
        cursor.write(#"{"op":"ok""#)
        if let number {
            cursor.write(#","id":"#)
            _ = cursor.writeInteger(number)
        }
        cursor.write(#","message":"#)
        let start = cursor.count
        let idRange = cursor.writeQuoted(id, after: #"{"id":"#)
        let groupRange = cursor.writeQuoted(group, after: #","group":"#)
        let userRange = cursor.writeQuoted(user, after: #","user":"#)
        var written = WrittenMessage(id: idRange, group: groupRange, user: userRange, createdAt: 0..<0)
        if let text { written.text = cursor.writeQuoted(text, after: #","text":"#) }
        if let imageUrl { written.imageUrl = cursor.writeQuoted(imageUrl, after: #","imageUrl":"#) }
        cursor.write(#","createdAt":"#)
        written.createdAt = cursor.writeInteger(createdAt)
        if let clientId { written.clientId = cursor.writeQuoted(clientId, after: #","clientId":"#) }
        cursor.write("}")
        let object = start..<cursor.count
        cursor.write("}")
        return (object, written)
    }

    /// Whether `text` (absent counts) is a native string whose bytes need no escaping.
    private static func isPlain(_ text: String?) -> Bool {
        guard let text else { return true }
        return text.utf8.withContiguousStorageIfAvailable { JSONEncoding.isPlain($0) } ?? false
    }
}
