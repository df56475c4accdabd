import Glibc
import JSON
import Logging
import Posix

/// Brings the files of a data folder up to date with journaled mutations, and commits.
///
/// `apply` folds mutations into memory: the small documents (the tree without `Messages`) as a
/// `JSONValue`, and per group the records written since the last commit. `commit` then writes
/// what changed: new records appended to each group's open segment and its index (a new
/// segment once the open one has reached `segmentBytes`), the changed documents replaced
/// whole, and last the manifest, renamed over the old one. Until that rename the old manifest
/// describes the folder, and bytes past its committed lengths are ignored and cut off at the
/// next start; after it, the journals it covers are deleted. So a crash at any point leaves
/// either the old checkpoint plus its journals or the new one.
///
/// Confined to one thread at a time: `Store.open` uses it, then the store's compactor thread.
final class Checkpoint {
    let layout: StoreLayout
    let files: MessageFiles
    let segmentBytes: Int
    /// The fields whose values index each message record by idempotency key (nil: none).
    let keyFields: IdempotencyFields?
    /// `keyFields`' names as JSON strings, as they stand in a record's bytes.
    private let ownerName: [UInt8]
    private let keyName: [UInt8]
    let logger: Logger
    /// What `commit` deletes for retention; set by the store's owner through `Store.retention`.
    var retention = MessageRetention()
    /// What the files hold as of the last commit (plus, during `commit`, the groups written).
    private(set) var manifest: Manifest
    /// The tree without `Messages`, always an object.
    private(set) var documents: JSONValue
    private var dirtyDocuments: Set<String> = []
    private var pending: [String: PendingGroup] = [:]
    /// Segment files of dropped groups, deleted once the manifest no longer names them.
    private var staleFiles: [String] = []
    /// Files and folders written since the last commit and not yet flushed.
    private var unsynced = Unsynced()
    /// Idempotency keys of the in-order records written since the last commit, per group.
    private var newKeys: [String: [IdempotencyKey]] = [:]

    /// What `commit` must flush before the manifest may name it.
    struct Unsynced {
        var files: [String] = []
        var folders: Set<String> = []
    }

    /// Beyond this many files a commit flushes the whole file system with one `syncfs`
    /// instead of one fsync per file: the migration and a checkpoint touching every group
    /// write thousands.
    static let filesToSyncOneByOne = 64

    /// Whether acknowledgements run alongside: then each file is written out in pieces of
    /// `pacedBytes` as it goes (`FileSystem.writeOut`: to the device, no cache flush) and
    /// flushed once when complete. On ext4 an fsync of the journal waits for the file system's
    /// journal commit, which carries whatever other data is being flushed at that moment; a
    /// checkpoint that flushed 50 MB at once held acknowledgements back for most of a second.
    /// Pieces of 256 KiB each with its own `fdatasync` fixed that, but cost a device cache
    /// flush per piece (about 300 per checkpoint), each one the journal's flushes queued
    /// behind; written out without a flush, the device sees two per group written.
    /// The migration and the start-up checkpoint, which nobody waits on, flush once at commit.
    ///
    /// Pieces of 1 MiB with a pause between two of a file: about 100 MB/s at most. At 25 MB/s
    /// (256 KiB pieces, and a pause after every file's last piece too, 128 of them for 64 groups'
    /// segments and indexes) writing took 5 of a checkpoint's 8 to 10 s, longer than 64 durable
    /// senders took to fill the next journal, so checkpoints fell behind.
    var paced = false
    static let pacedBytes = 1 << 20
    /// The pause between two pieces of one file.
    static let pauseMicroseconds: UInt32 = 10_000

    init(
        layout: StoreLayout, files: MessageFiles, manifest: Manifest, documents: JSONValue, segmentBytes: Int,
        keyFields: IdempotencyFields?, logger: Logger
    ) {
        self.layout = layout
        self.files = files
        self.manifest = manifest
        self.documents = documents
        self.segmentBytes = segmentBytes
        self.keyFields = keyFields
        ownerName = keyFields.map { JSONValue.string($0.owner).serialized } ?? []
        keyName = keyFields.map { JSONValue.string($0.key).serialized } ?? []
        self.logger = logger
    }

    var hasChanges: Bool { !pending.isEmpty || !dirtyDocuments.isEmpty }

    // MARK: Applying

    /// Folds one mutation in, with the tree semantics of `DocumentTree.apply`.
    func apply(_ mutation: Mutation) throws(StoreError) {
        let path = mutation.path
        guard let first = path.first else { return try applyAtRoot(mutation) }
        guard first == "Messages" else {
            DocumentTree.apply(mutation, to: &documents)
            dirtyDocuments.insert(first)
            return
        }
        switch path.count {
        case 1:
            switch mutation {
            case .set(_, let value):
                dropAllGroups()
                for (gid, group) in value.objectValue ?? [:] { try apply(.set(path: ["Messages", gid], value: group)) }
            case .delete:
                dropAllGroups()
            case .merge(_, let children):
                for (gid, group) in children { try apply(.set(path: ["Messages", gid], value: group)) }
            }
        case 2:
            let gid = path[1]
            switch mutation {
            case .set(_, let value) where !value.isNull:
                drop(gid, exists: true)
                for (mid, message) in value.objectValue ?? [:] { try apply(.set(path: ["Messages", gid, mid], value: message)) }
            case .set, .delete:
                drop(gid, exists: false)
            case .merge(_, let children):
                pending[gid, default: PendingGroup()].exists = true
                for (mid, message) in children { try apply(.set(path: ["Messages", gid, mid], value: message)) }
            }
        default:
            let gid = path[1]
            let mid = path[2]
            // Taken out of the dictionary so its records are uniquely referenced and change in
            // place: a copy per mutation would make a checkpoint quadratic in a group's messages.
            var group = pending.removeValue(forKey: gid) ?? PendingGroup()
            group.exists = true
            let replacesWhole: Bool
            switch mutation {
            case .set, .delete: replacesWhole = path.count == 3
            case .merge: replacesWhole = false
            }
            let value: JSONValue?
            switch mutation {
            case .set(_, let whole) where replacesWhole:
                // A new message, the common case: its value as it stands.
                value = whole.isNull ? nil : whole
            default:
                var wrapper: JSONValue = .object([:])
                if !replacesWhole {
                    let base: JSONValue?
                    if let known = group.value(of: mid) {
                        base = try known.map { bytes throws(StoreError) in try Self.parse(bytes) }
                    } else if group.dropsStored {
                        base = nil
                    } else {
                        base = try files.record(gid, mid)
                    }
                    if let base { wrapper = .object(["v": base]) }
                }
                let relative: Mutation
                switch mutation {
                case .set(_, let value): relative = .set(path: ["v"] + path[3...], value: value)
                case .merge(_, let value): relative = .merge(path: ["v"] + path[3...], value: value)
                case .delete: relative = .delete(path: ["v"] + path[3...])
                }
                DocumentTree.apply(relative, to: &wrapper)
                value = wrapper["v"]
            }
            var key: IdempotencyKey?
            if let keyFields, let owner = value?[keyFields.owner]?.stringValue, let id = value?[keyFields.key]?.stringValue {
                key = IdempotencyKey(owner: owner, key: id)
            }
            group.set(mid, value.map(\.serialized), key: key)
            pending[gid] = group
        }
    }

    /// Folds in a line that set the message of `gid` whose id's UTF-8 is `mid` to `value` (its
    /// bytes as the journal has them, which are the record's: `MessageLine`), as `apply`
    /// would, without parsing it.
    func applyWholeMessage(_ gid: String, _ mid: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) {
        // Changed in place (the subscript's modify accessor): the group's buffers stay
        // uniquely referenced, and the group id is hashed once.
        pending[gid, default: PendingGroup()].write(mid, copying: value, key: idempotencyKey(value))
    }

    /// The idempotency key of a record's bytes: its `keyFields` strings, found by scanning
    /// the object's members and parsing only those two values.
    private func idempotencyKey(_ value: UnsafeRawBufferPointer) -> IdempotencyKey? {
        // Most records carry no key: a search for the key's name (as it stands in the bytes,
        // quoted) settles those without walking their members.
        guard keyFields != nil, Self.contains(keyName, in: value) else { return nil }
        var owner: Range<Int>?
        var key: Range<Int>?
        do throws(JSONSpans.Failure) {
            try JSONSpans.forEachMember(value, in: 0..<value.count) { name, member in
                let nameBytes = UnsafeRawBufferPointer(rebasing: value[name])
                if nameBytes.elementsEqual(ownerName) {
                    owner = member
                } else if nameBytes.elementsEqual(keyName) {
                    key = member
                }
            }
        } catch {
            return nil
        }
        guard let owner, let key,
              let ownerValue = try? JSONValue.parse(UnsafeRawBufferPointer(rebasing: value[owner])).stringValue,
              let keyValue = try? JSONValue.parse(UnsafeRawBufferPointer(rebasing: value[key])).stringValue
        else { return nil }
        return IdempotencyKey(owner: ownerValue, key: keyValue)
    }

    /// Whether the quoted name `needle` (a quote, at least one byte, a quote) occurs in `bytes`.
    /// Found by its first letter, rarer than the quote before it.
    private static func contains(_ needle: [UInt8], in bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress, needle.count > 2, needle.count <= bytes.count else { return false }
        let last = bytes.count - needle.count + 1
        var start = 1
        while start <= last, let hit = memchr(base + start, Int32(needle[1]), last - start + 1) {
            let offset = base.distance(to: UnsafeRawPointer(hit)) - 1
            if UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + needle.count]).elementsEqual(needle) { return true }
            start = offset + 2
        }
        return false
    }

    private func applyAtRoot(_ mutation: Mutation) throws(StoreError) {
        switch mutation {
        case .set(_, let value):
            var members = value.objectValue ?? [:]
            let messages = members.removeValue(forKey: "Messages")
            replaceDocuments(with: members)
            try apply(.set(path: ["Messages"], value: messages ?? .object([:])))
        case .delete:
            replaceDocuments(with: [:])
            dropAllGroups()
        case .merge(_, let children):
            for (key, value) in children { try apply(.set(path: [key], value: value)) }
        }
    }

    private func replaceDocuments(with members: [String: JSONValue]) {
        dirtyDocuments.formUnion(documents.objectValue?.keys ?? [:].keys)
        dirtyDocuments.formUnion(members.keys)
        documents = .object(members)
    }

    private func drop(_ gid: String, exists: Bool) {
        pending[gid] = PendingGroup(dropsStored: true, exists: exists)
    }

    private func dropAllGroups() {
        for gid in Set(manifest.groups.keys).union(pending.keys) { drop(gid, exists: false) }
    }

    private static func parse(_ bytes: [UInt8]) throws(StoreError) -> JSONValue {
        do {
            return try JSONValue.parse(bytes, limits: .trustedFile)
        } catch {
            preconditionFailure("a value this checkpoint serialized does not parse: \(error)")
        }
    }

    // MARK: Committing

    /// What a commit changed, for the chat service's memory.
    struct Outcome {
        /// Per written group, its highest in-order id now on disk (nil: none).
        var lastIDs: [String: String?]
        var appendedBytes: Int
        /// Per group, what retention deleted.
        var dropped: [String: DroppedMessages] = [:]
    }

    /// Writes every change and the manifest for journal `generation`; see the type's comment
    /// for the order. On failure nothing the old manifest describes has changed.
    func commit(generation: Int) throws(StoreError) -> Outcome {
        var outcome = Outcome(lastIDs: [:], appendedBytes: 0)
        for gid in pending.keys.sorted() {
            outcome.appendedBytes += try flush(gid)
            outcome.lastIDs[gid] = manifest.groups[gid]?.lastID
        }
        pending.removeAll()
        try syncWrittenFiles()
        try writeDocuments()
        let expired = expiredSegments()
        for (gid, segments) in expired {
            outcome.dropped[gid] = dropSegments(gid, segments)
        }
        manifest.generation = generation
        try io(FileSystem.writeFile(manifest.serialized, to: layout.temporaryManifest, mode: 0o600))
        try io(FileSystem.rename(layout.temporaryManifest, to: layout.manifest))
        try io(FileSystem.syncDirectory(layout.directory))
        // The index learns the new keys before the caller hears of the commit (and drops the
        // messages from memory); the deleted segments' keys go while their indexes still exist.
        for (gid, keys) in newKeys { files.keys.add(keys, group: gid) }
        newKeys.removeAll()
        for (gid, segments) in expired {
            for segment in segments where segment.keyed > 0 {
                let keys = (try? files.index(gid, segment))?.compactMap(\.key) ?? []
                files.keys.remove(keys, group: gid)
            }
        }
        files.replace(manifest.groups)
        files.retire(staleFiles)
        staleFiles.removeAll()
        return outcome
    }

    /// Per group, the oldest sealed segments that `retention` lets go, oldest first.
    private func expiredSegments() -> [String: [SegmentSummary]] {
        guard !retention.isUnlimited else { return [:] }
        var expired: [String: [SegmentSummary]] = [:]
        for (gid, catalog) in manifest.groups {
            var newer = catalog.recordCount
            var count = 0
            // The last segment is the open one: never deleted, so sequence numbers never repeat.
            while count < catalog.segments.count - 1 {
                let segment = catalog.segments[count]
                newer -= segment.records
                let beyondNewest = retention.keepNewest > 0 && newer >= retention.keepNewest
                let tooOld = retention.before.map { segment.records == 0 || segment.last < $0 } ?? false
                guard beyondNewest || tooOld else { break }
                count += 1
            }
            if count > 0 { expired[gid] = Array(catalog.segments[..<count]) }
        }
        return expired
    }

    /// Takes `segments` (the oldest of group `gid`) out of the manifest and marks their files
    /// stale; relocated records of messages with ids in their range, or that live in them, go too.
    private func dropSegments(_ gid: String, _ segments: [SegmentSummary]) -> DroppedMessages {
        guard var catalog = manifest.groups[gid] else { return DroppedMessages(through: "", records: 0) }
        let sequences = Set(segments.map(\.sequence))
        let through = segments.filter { $0.records > 0 }.map(\.last).max() ?? ""
        catalog.segments.removeFirst(segments.count)
        catalog.relocated = catalog.relocated.filter { mid, location in mid > through && !sequences.contains(location.sequence) }
        manifest.groups[gid] = catalog
        for segment in segments {
            staleFiles.append(layout.segment(gid, segment.sequence))
            staleFiles.append(layout.index(gid, segment.sequence))
        }
        return DroppedMessages(through: through, records: segments.reduce(0) { $0 + $1.records })
    }

    /// Appends one group's pending records to its files and records the result in `manifest`
    /// (in memory only: the manifest on disk changes at `commit`). Returns the bytes appended.
    @discardableResult
    func flush(_ gid: String) throws(StoreError) -> Int {
        guard let group = pending.removeValue(forKey: gid) else { return 0 }
        let stored = manifest.groups[gid] ?? GroupCatalog()
        var catalog = stored
        var nextSequence = stored.nextSequence
        if group.dropsStored {
            for segment in stored.segments {
                staleFiles.append(layout.segment(gid, segment.sequence))
                staleFiles.append(layout.index(gid, segment.sequence))
            }
            catalog = GroupCatalog()
        }
        guard group.exists else {
            manifest.groups[gid] = nil
            return 0
        }
        // Records come in ascending id order, so once one sorts after the last stored id
        // every later one does: the ids are compared only until then.
        let lastID = catalog.lastID
        var pastLast = lastID == nil
        var writes = SegmentWrites()
        var open = catalog.segments.popLast().map(SegmentAppend.init(continuing:))
        var keys: [IdempotencyKey] = []
        // An id is made a string only where one is needed: comparing with the last stored id,
        // and records outside the id order (deletions, moved records).
        group.storage.withUnsafeBytes { storage in
            group.forEachRecord { id, record in
                let key = record.key
                let value = record.value.map { UnsafeRawBufferPointer(rebasing: storage[$0]) }
                if value == nil && group.dropsStored && catalog.relocated[group.name(of: id)] == nil { return }
                if !pastLast, let lastID { pastLast = group.name(of: id) > lastID }
                let inOrder = value != nil && pastLast
                if open == nil || (inOrder && open!.bytes >= segmentBytes) {
                    if let full = open { catalog.segments.append(writes.add(full)) }
                    open = SegmentAppend(starting: nextSequence)
                    nextSequence += 1
                }
                if inOrder {
                    open!.append(id, in: storage, value: value, key: key)
                    if let key { keys.append(key) }
                    if !catalog.relocated.isEmpty { catalog.relocated[group.name(of: id)] = nil }
                } else {
                    let mid = group.name(of: id)
                    catalog.relocated[mid] = open!.appendMoved(mid, value: value)
                }
            }
        }
        if let open { catalog.segments.append(writes.add(open)) }
        if !keys.isEmpty { newKeys[gid, default: []] += keys }
        let appended = try writes.write(gid, layout: layout, pacedBytes: paced ? Self.pacedBytes : nil, into: &unsynced)
        manifest.groups[gid] = catalog
        return appended
    }

    /// Makes the segments and folders written since the last commit durable.
    private func syncWrittenFiles() throws(StoreError) {
        defer { unsynced = Unsynced() }
        if unsynced.files.count + unsynced.folders.count > Self.filesToSyncOneByOne {
            return try io(FileSystem.syncFileSystem(layout.directory))
        }
        for path in unsynced.files {
            let fd = try io(FileSystem.open(path, flags: O_WRONLY))
            defer { FileSystem.close(fd) }
            try io(FileSystem.fdatasync(fd, path: path))
        }
        // Deepest first, so a new group folder's entries are durable before its own entry.
        for folder in unsynced.folders.sorted(by: { $0.count > $1.count }) {
            try io(FileSystem.syncDirectory(folder))
        }
    }

    private func writeDocuments() throws(StoreError) {
        guard !dirtyDocuments.isEmpty else { return }
        try io(FileSystem.makeDirectories(layout.documents))
        let members = documents.objectValue ?? [:]
        for key in dirtyDocuments.sorted() {
            let path = layout.document(key)
            if let value = members[key] {
                try io(FileSystem.writeFile(value.serialized + [0x0A], to: path + ".tmp", mode: 0o600))
                try io(FileSystem.rename(path + ".tmp", to: path))
            } else {
                _ = try io(FileSystem.removeIfExists(path))
            }
        }
        try io(FileSystem.syncDirectory(layout.documents))
        manifest.documents = members.keys.sorted()
        dirtyDocuments.removeAll()
    }
}
