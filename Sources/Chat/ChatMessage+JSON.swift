import JSON

/// A message in the tree's shape and in the protocol's shape.
extension ChatMessage {
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
        let idRange = writer.string("id", id)
        let groupRange = writer.string("group", group)
        let userRange = writer.string("user", user)
        var written = WrittenMessage(id: idRange, group: groupRange, user: userRange, createdAt: 0..<0)
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
