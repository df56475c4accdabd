import JSON

/// A message in the tree's shape and in the protocol's shape.
extension ChatMessage {
    /// `{"clientId"?,"createdAt","imageUrl"|"message","receivedBy"?,"user"}`, keys sorted as
    /// the journal wants them, written by hand because every `send` writes one.
    func writeTreeValue(into out: inout [UInt8]) {
        var writer = JSONWriter(continuing: &out)
        if let clientId { writer.string("clientId", clientId) }
        writer.integer("createdAt", createdAt)
        if let imageUrl { writer.string("imageUrl", imageUrl) }
        if let text { writer.string("message", text) }
        if !receivedBy.isEmpty { writeReceipts(&writer) }
        writer.string("user", user)
        out = writer.finished()
    }

    /// Appends the journal line that stores this message in group `group`, newline included:
    /// byte for byte what `Mutation.set(path: ["Messages", group, id], value: treeValue)`
    /// writes, since the line's keys (`op`, `path`, `value`) and the value's are in sorted order.
    func appendJournalLine(group: String, to out: inout [UInt8]) {
        out.append(contentsOf: Self.journalLinePrefix)
        JSONEncoding.appendEscapedString(group, to: &out)
        out.append(UInt8(ascii: ","))
        JSONEncoding.appendEscapedString(id, to: &out)
        out.append(contentsOf: Self.journalValueKey)
        writeTreeValue(into: &out)
        out.append(contentsOf: Self.journalLineEnd)
    }

    private static let journalLinePrefix: [UInt8] = Array(#"{"op":"set","path":["Messages","#.utf8)
    private static let journalValueKey: [UInt8] = Array(#"],"value":"#.utf8)
    private static let journalLineEnd: [UInt8] = [UInt8(ascii: "}"), UInt8(ascii: "\n")]

    /// The stored form as a value, for the journal and the tree API.
    var treeValue: JSONValue {
        var fields: [String: JSONValue] = ["user": .string(user), "createdAt": .integer(createdAt)]
        if let text { fields["message"] = .string(text) }
        if let imageUrl { fields["imageUrl"] = .string(imageUrl) }
        if let clientId { fields["clientId"] = .string(clientId) }
        if !receivedBy.isEmpty { fields["receivedBy"] = .object(receivedBy.mapValues { .integer($0) }) }
        return .object(fields)
    }

    /// The protocol's Message object, fields written into `writer`; returns where each value
    /// lies in the writer's bytes.
    @discardableResult
    func write(into writer: inout JSONWriter, group: String) -> WrittenMessage {
        let id = writer.string("id", id)
        let group = writer.string("group", group)
        let user = writer.string("user", user)
        var written = WrittenMessage(id: id, group: group, user: user, createdAt: 0..<0)
        if let text { written.text = writer.string("text", text) }
        if let imageUrl { written.imageUrl = writer.string("imageUrl", imageUrl) }
        written.createdAt = writer.integer("createdAt", createdAt)
        if let clientId { written.clientId = writer.string("clientId", clientId) }
        if !receivedBy.isEmpty { written.receivedBy = writeReceipts(&writer) }
        return written
    }

    @discardableResult
    private func writeReceipts(_ writer: inout JSONWriter) -> Range<Int> {
        writer.object("receivedBy") { nested in
            for (uid, time) in receivedBy.sorted(by: { $0.key < $1.key }) {
                nested.dynamicKey(uid)
                nested.integerValue(time)
            }
        }
    }
}

extension JSONWriter {
    /// A bare integer after `dynamicKey`.
    mutating func integerValue(_ value: Int64) {
        var out: [UInt8] = []
        JSONEncoding.appendInteger(value, to: &out)
        appendRaw(out)
    }
}
