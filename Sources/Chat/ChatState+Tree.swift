import Dispatch
import JSON

/// Conversion between the typed state and the document tree (docs/durability.md).
///
/// ```
/// Groups/<gid>:         name, createdBy, createdAt, invite, userList{uid:true}, direct?
/// Users/<uid>:          name, avatar, createdAt, groupList{gid:true}
/// Messages/<gid>/<mid>: message | imageUrl, user, createdAt, clientId?, receivedBy?{uid:ms}
/// Auth/<uid>:           email, passwordHash, revoked?{sid:expiry}
/// Media/<id>:           owner, type, bytes, createdAt
/// ```
/// Absent values are left out rather than written as null, because a journal `set` of null
/// deletes (Firebase's rule); `online` is live state and is never written.
extension ChatState {
    /// Builds the state from the tree `Store.open` returned, whose `Messages` hold each
    /// group's newest messages; `storedCounts` (`Store.storedMessageCounts`) says how many
    /// each group has on disk in all, so the rest count as `olderOnDisk`. Entries that do not
    /// have the expected shape are skipped, so a hand-edited tree cannot crash the start.
    ///
    /// The tree is consumed branch by branch and each group's messages are released as soon
    /// as they are converted, so no message exists twice in full.
    public init(tree: consuming JSONValue, storedCounts: [String: Int] = [:]) {
        self.init()
        guard case .object(var root) = tree else { return }
        tree = .null
        for (uid, value) in root.removeValue(forKey: "Users")?.objectValue ?? [:] {
            if let user = ChatUser(treeValue: value) { users[uid] = user }
        }
        for (uid, value) in root.removeValue(forKey: "Auth")?.objectValue ?? [:] {
            if let record = ChatAuth(treeValue: value) { auth[uid] = record }
        }
        for (id, value) in root.removeValue(forKey: "Media")?.objectValue ?? [:] {
            if let record = MediaRecord(treeValue: value) { media[id] = record }
        }
        for (gid, value) in root.removeValue(forKey: "Groups")?.objectValue ?? [:] {
            if let group = ChatGroup(treeValue: value) { groups[gid] = group }
        }
        guard case .object(var messageRoot)? = root.removeValue(forKey: "Messages") else {
            rebuildIndexes()
            return
        }
        root = [:]
        var slices = Array(repeating: [(String, [String: JSONValue])](), count: Self.loadWorkers)
        var next = 0
        for gid in Array(messageRoot.keys) {
            guard case .object(let entries)? = messageRoot.removeValue(forKey: gid) else { continue }
            slices[next].append((gid, entries))
            next = (next + 1) % Self.loadWorkers
        }
        for (gid, var log) in Self.convertInParallel(consume slices, users: users) {
            log.olderOnDisk = max(0, (storedCounts[gid] ?? 0) - log.count)
            messages[gid] = log
        }
        rebuildIndexes()
    }

    /// Threads that convert stored messages at start-up. Groups are independent, so they are
    /// dealt out round-robin; each worker owns its share of the parsed tree and frees it as it
    /// goes, which spreads both the conversion and the deallocation over the machine's cores.
    static let loadWorkers = 2

    private static func convertInParallel(
        _ slices: consuming [[(String, [String: JSONValue])]], users: [String: ChatUser]
    ) -> [(String, MessageLog)] {
        let count = slices.count
        let inputs = UnsafeMutableBufferPointer<[(String, [String: JSONValue])]>.allocate(capacity: count)
        _ = inputs.initialize(from: slices)
        slices = []
        let outputs = UnsafeMutableBufferPointer<[(String, MessageLog)]>.allocate(capacity: count)
        _ = outputs.initialize(from: repeatElement([], count: count))
        let work = LoadWork(inputs: inputs, outputs: outputs)
        DispatchQueue.concurrentPerform(iterations: count) { worker in
            var groups = (work.inputs.baseAddress! + worker).move()
            var converted: [(String, MessageLog)] = []
            converted.reserveCapacity(groups.count)
            while let (gid, entries) = groups.popLast() {
                var list: [ChatMessage] = []
                list.reserveCapacity(entries.count)
                for (mid, value) in entries {
                    if let message = message(id: mid, value, users: users) { list.append(message) }
                }
                converted.append((gid, MessageLog(consume list)))
            }
            work.outputs[worker] = converted
        }
        inputs.deallocate()
        let result = Array(outputs.joined())
        outputs.deinitialize()
        outputs.deallocate()
        return result
    }

    /// One message from its tree value, or nil without a `user` string.
    ///
    /// Walks the few fields once instead of looking each name up: a million messages make
    /// five hashed lookups apiece the larger part of start-up, while comparing a short key
    /// against the names below is a few instructions.
    static func message(id: String, _ value: JSONValue, users: [String: ChatUser]) -> ChatMessage? {
        guard case .object(let fields) = value else { return nil }
        var user: String?
        var text: String?
        var imageUrl: String?
        var createdAt: Int64 = 0
        var clientId: String?
        var receivedBy: [String: Int64] = [:]
        for (key, field) in fields {
            switch key {
            case "user": user = field.stringValue
            case "message": text = field.stringValue
            case "createdAt": createdAt = field.int64Value ?? 0
            case "imageUrl": imageUrl = field.stringValue
            case "clientId": clientId = field.stringValue
            case "receivedBy":
                for (uid, time) in field.objectValue ?? [:] { receivedBy[uid] = time.int64Value ?? 0 }
            default: continue
            }
        }
        guard var user else { return nil }
        // Share the user id's storage with the user index: one string per user, not per message.
        if let index = users.index(forKey: user) { user = users.keys[index] }
        return ChatMessage(
            id: id, user: user, text: text, imageUrl: imageUrl, createdAt: createdAt, clientId: clientId,
            receivedBy: receivedBy)
    }

    /// The subtree at `path` for the read-only tree API, `Auth` excluded; nil when missing.
    /// `online` gives a group's live online users, `history` all of a group's messages
    /// (memory and disk).
    public func subtree(_ path: [String], online: (String) -> [String], history: (String) -> [ChatMessage]) -> JSONValue? {
        guard let branch = path.first else {
            var root: [String: JSONValue] = [:]
            for name in ["Groups", "Users", "Messages", "Media"] { root[name] = subtree([name], online: online, history: history) }
            return .object(root)
        }
        let rest = Array(path.dropFirst())
        let key = rest.first
        switch branch {
        case "Groups":
            if let key {
                return groups[key].flatMap { $0.treeValue(online: online(key)).descend(Array(rest.dropFirst())) }
            }
            return .object(groups.reduce(into: [:]) { $0[$1.key] = $1.value.treeValue(online: online($1.key)) })
        case "Users":
            if let key { return users[key].flatMap { $0.treeValue.descend(Array(rest.dropFirst())) } }
            return .object(users.reduce(into: [:]) { $0[$1.key] = $1.value.treeValue })
        case "Messages":
            func tree(_ gid: String) -> JSONValue {
                .object(history(gid).reduce(into: [:]) { $0[$1.id] = $1.treeValue })
            }
            if let key {
                guard messages[key] != nil else { return nil }
                return tree(key).descend(Array(rest.dropFirst()))
            }
            return .object(messages.keys.reduce(into: [:]) { $0[$1] = tree($1) })
        case "Media":
            if let key { return media[key].flatMap { $0.treeValue.descend(Array(rest.dropFirst())) } }
            return .object(media.mapValues(\.treeValue))
        default:
            return nil
        }
    }
}

extension JSONValue {
    /// The value below `path`, or nil when some step is missing.
    func descend(_ path: [String]) -> JSONValue? {
        var node = self
        for key in path {
            guard let child = node[key] else { return nil }
            node = child
        }
        return node
    }
}

/// The buffers the start-up workers share: each worker reads and writes only its own index,
/// and the caller touches them only before and after `concurrentPerform`, so no lock is needed.
private struct LoadWork: @unchecked Sendable {
    let inputs: UnsafeMutableBufferPointer<[(String, [String: JSONValue])]>
    let outputs: UnsafeMutableBufferPointer<[(String, MessageLog)]>
}
