import Glibc
import JSON
import Posix

/// The committed segments of every group, and reads over them from any thread.
///
/// The compactor replaces a group's catalog after each checkpoint commits; readers take a copy
/// of the catalog under the lock and then read only committed bytes, which never change
/// (segments and indexes are append-only, and bytes past the committed length are not read).
/// Parsed indexes are cached, a few dozen at a time, because paging through one group reads
/// the same index again and again.
final class MessageFiles: @unchecked Sendable {
    // @unchecked: `catalogs` and `cache` are guarded by `lock`; the layout never changes.
    let layout: StoreLayout
    private let lock = Monitor()
    private var catalogs: [String: GroupCatalog]
    private var cache: [String: [SegmentFormat.IndexEntry]] = [:]
    private var cacheOrder: [String] = []
    static let cachedIndexes = 64
    /// Which group holds each idempotency key.
    let keys = IdempotencyIndex()
    /// Reads under way (`reading`), and files retired while they ran, deleted by the last.
    private var activeReads = 0
    private var retired: [String] = []

    init(layout: StoreLayout, catalogs: [String: GroupCatalog]) {
        self.layout = layout
        self.catalogs = catalogs
    }

    /// A copy of every group's catalog.
    var all: [String: GroupCatalog] {
        lock.withLock { catalogs }
    }

    func catalog(_ gid: String) -> GroupCatalog {
        lock.withLock { catalogs[gid] } ?? GroupCatalog()
    }

    /// Installs the catalogs a checkpoint committed.
    func replace(_ new: [String: GroupCatalog]) {
        lock.withLock { catalogs = new }
    }

    /// Runs `body`, a read of committed files that may have taken a catalog before the last
    /// `replace`: files retired meanwhile stay until it (and every other read) is done.
    func reading<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        lock.withLock { activeReads += 1 }
        defer {
            let doomed: [String] = lock.withLock {
                activeReads -= 1
                guard activeReads == 0 else { return [] }
                defer { retired.removeAll() }
                return retired
            }
            for path in doomed { _ = try? FileSystem.removeIfExists(path) }
        }
        return try body()
    }

    /// Deletes files no catalog names any more (call after `replace`): now, or when the reads
    /// under way are done.
    func retire(_ paths: [String]) {
        let now: [String] = lock.withLock {
            guard activeReads > 0 else { return paths }
            retired += paths
            return []
        }
        for path in now { _ = try? FileSystem.removeIfExists(path) }
    }

    /// Up to `limit` records with ids below `before` (all when nil), newest ones, ascending;
    /// `more` tells whether older ones remain.
    func older(_ gid: String, before: String?, limit: Int) throws(StoreError) -> MessagePage {
        let catalog = catalog(gid)
        let want = limit + 1
        var picked: [(id: String, location: RecordLocation)] = []
        for segment in catalog.segments.reversed() where segment.records > 0 && picked.count < want {
            if let before, segment.first >= before { continue }
            let entries = try index(gid, segment)
            var end = before.map { Self.firstIndex(in: entries, notBefore: $0) } ?? entries.count
            while end > 0 && picked.count < want {
                end -= 1
                picked.append((entries[end].id, location(segment, entries[end])))
            }
        }
        let floor = picked.count >= want ? picked[picked.count - 1].id : nil
        let records = try resolve(gid, catalog, picked, inRange: { id in
            (before == nil || id < before!) && (floor == nil || id >= floor!)
        })
        let page = records.count > limit ? Array(records.suffix(limit)) : records
        return MessagePage(records: page, more: records.count > limit)
    }

    /// Up to `limit` records with ids above `after` (from the start when nil) and below
    /// `before` (no bound when nil), ascending; `more` tells whether later ones remain below
    /// `before`.
    func newer(_ gid: String, after: String?, before: String?, limit: Int) throws(StoreError) -> MessagePage {
        let catalog = catalog(gid)
        let want = limit + 1
        var picked: [(id: String, location: RecordLocation)] = []
        for segment in catalog.segments where segment.records > 0 && picked.count < want {
            if let after, segment.last <= after { continue }
            if let before, segment.first >= before { break }
            let entries = try index(gid, segment)
            var start = after.map { Self.firstIndex(in: entries, after: $0) } ?? 0
            while start < entries.count && picked.count < want {
                if let before, entries[start].id >= before { break }
                picked.append((entries[start].id, location(segment, entries[start])))
                start += 1
            }
        }
        let ceiling = picked.count >= want ? picked[picked.count - 1].id : nil
        let records = try resolve(gid, catalog, picked, inRange: { id in
            (after == nil || id > after!) && (before == nil || id < before!) && (ceiling == nil || id <= ceiling!)
        })
        let page = records.count > limit ? Array(records.prefix(limit)) : records
        return MessagePage(records: page, more: records.count > limit)
    }

    /// The current value of message `mid`, or nil when there is none (or it was deleted).
    func record(_ gid: String, _ mid: String) throws(StoreError) -> JSONValue? {
        let catalog = catalog(gid)
        if let location = catalog.relocated[mid] {
            return try readOne(gid, mid, location)
        }
        guard let segment = catalog.segments.first(where: { $0.records > 0 && $0.first <= mid && mid <= $0.last }) else {
            return nil
        }
        let entries = try index(gid, segment)
        let position = Self.firstIndex(in: entries, notBefore: mid)
        guard position < entries.count, entries[position].id == mid else { return nil }
        return try readOne(gid, mid, location(segment, entries[position]))
    }

    /// The message whose index line carries `key`, and its group; nil when none does.
    func sentBy(_ key: IdempotencyKey) throws(StoreError) -> (group: String, id: String, value: JSONValue)? {
        guard let gid = keys.group(of: key) else { return nil }
        let catalog = catalog(gid)
        for segment in catalog.segments.reversed() where segment.keyed > 0 {
            for entry in try index(gid, segment) where entry.key == key {
                return try record(gid, entry.id).map { (gid, entry.id, $0) }
            }
        }
        return nil
    }

    /// Reads every keyed index line into `keys` and marks it ready: what the indexes of all
    /// groups say, read once at start on the compactor thread.
    func buildKeys() throws(StoreError) {
        defer { keys.markReady() }
        for (gid, catalog) in all {
            for segment in catalog.segments where segment.keyed > 0 {
                keys.add(try parsedIndex(gid, segment).compactMap(\.key), group: gid)
            }
        }
    }

    /// The value of the record at `location` (nil for a deletion).
    private func readOne(_ gid: String, _ mid: String, _ location: RecordLocation) throws(StoreError) -> JSONValue? {
        let records = try read(gid, [(mid, location)])
        return records.isEmpty ? nil : records[0].value
    }

    /// Every current record of the group, ascending (for the tree API and the tests).
    func everything(_ gid: String) throws(StoreError) -> [(id: String, value: JSONValue)] {
        let catalog = catalog(gid)
        var values: [String: JSONValue?] = [:]
        for segment in catalog.segments where segment.bytes > 0 {
            let path = layout.segment(gid, segment.sequence)
            let bytes = try readRange(path, offset: 0, count: segment.bytes)
            try Self.eachRecord(bytes, base: 0, path: path) { _, record in
                if !record.moved { values[record.id] = record.value }
            }
        }
        for (mid, value) in try read(gid, catalog.relocated.map { ($0.key, $0.value) }) {
            values[mid] = value
        }
        return values.compactMap { id, value in value.map { (id, $0) } }.sorted { $0.id < $1.id }
    }

    /// The newest `count` records of the group by id, ascending, read from the ends of its
    /// segments without their indexes: what start-up keeps in memory.
    func newest(_ gid: String, count: Int) throws(StoreError) -> [(id: String, value: JSONValue)] {
        guard count > 0 else { return [] }
        let catalog = catalog(gid)
        var found: [(id: String, value: JSONValue?, location: RecordLocation)] = []
        for segment in catalog.segments.reversed() where segment.records > 0 && found.count < count {
            let path = layout.segment(gid, segment.sequence)
            let average = max(1, segment.bytes / max(1, segment.records))
            let need = count - found.count
            // Fewer records than the segment holds fit in its bytes (no overflow either).
            var chunk = need >= segment.records ? segment.bytes : min(segment.bytes, average * need * 5 / 4 + 4096)
            while true {
                let start = segment.bytes - chunk
                let bytes = try readRange(path, offset: start, count: chunk)
                guard bytes.count == chunk else {
                    throw .corruptSegment(file: path, offset: start + bytes.count, reason: "the file ends before its committed length")
                }
                // Committed bytes end with a whole line: the next checkpoint appends after them.
                guard bytes.last == 0x0A else {
                    throw .corruptSegment(file: path, offset: segment.bytes - 1, reason: "the committed bytes do not end with a newline")
                }
                // Line ends first (cheap), then records parsed from the last one backwards,
                // only as many as needed. A chunk that starts inside the file starts inside a
                // line: that first piece is not a record.
                var ends: [Int] = []
                for (position, byte) in bytes.enumerated() where byte == 0x0A { ends.append(position) }
                var newest: [(id: String, value: JSONValue?, location: RecordLocation)] = []
                var line = ends.count - 1
                while line >= (start > 0 ? 1 : 0) && newest.count < need {
                    let lineStart = line > 0 ? ends[line - 1] + 1 : 0
                    let location = RecordLocation(sequence: segment.sequence, offset: start + lineStart, length: ends[line] - lineStart)
                    let record = try Self.parseLine(bytes, lineStart..<ends[line], path: path, offset: location.offset)
                    if !record.moved { newest.append((record.id, record.value, location)) }
                    line -= 1
                }
                if newest.count >= need || start == 0 {
                    found = newest.reversed() + found
                    break
                }
                chunk = min(segment.bytes, chunk * 4)
            }
        }
        // A message stored after a newer one (a clock that went back, another node's clock in
        // cluster mode) has no line in the id order: only `relocated` knows it. Those that sort
        // into the window belong to it; below a full window's oldest id they are older than
        // every message kept.
        var entries = found.map { (id: $0.id, value: $0.value, moved: catalog.relocated[$0.id]) }
        if !catalog.relocated.isEmpty {
            let listed = Set(found.map(\.id))
            let floor = found.count >= count ? found.first?.id : nil
            for (mid, location) in catalog.relocated where !listed.contains(mid) && floor.map({ mid > $0 }) ?? true {
                entries.append((mid, nil, location))
            }
            entries.sort { $0.id < $1.id }
            if entries.count > count { entries.removeFirst(entries.count - count) }
        }
        var movedValues: [String: JSONValue] = [:]
        let moved = entries.compactMap { entry in entry.moved.map { (id: entry.id, location: $0) } }
        for (mid, value) in try read(gid, moved) { movedValues[mid] = value }
        return entries.compactMap { entry in
            guard let value = entry.moved == nil ? entry.value : movedValues[entry.id] else { return nil }
            return (entry.id, value)
        }
    }

    // MARK: Reading

    /// Reads `picked` (plus relocated records in range that no index lists), newest relocation
    /// first, ascending, deleted ones left out.
    private func resolve(
        _ gid: String, _ catalog: GroupCatalog, _ picked: [(id: String, location: RecordLocation)],
        inRange: (String) -> Bool
    ) throws(StoreError) -> [(id: String, value: JSONValue)] {
        var chosen = picked
        if !catalog.relocated.isEmpty {
            let listed = Set(picked.map(\.id))
            for index in chosen.indices {
                if let moved = catalog.relocated[chosen[index].id] { chosen[index].location = moved }
            }
            for (mid, location) in catalog.relocated where !listed.contains(mid) && inRange(mid) {
                chosen.append((mid, location))
            }
        }
        chosen.sort { $0.id < $1.id }
        return try read(gid, chosen).compactMap { id, value in value.map { (id, $0) } }
    }

    /// The records at `locations`, in the order given: one `pread` per segment.
    private func read(_ gid: String, _ locations: [(id: String, location: RecordLocation)]) throws(StoreError) -> [(id: String, value: JSONValue?)] {
        var spans: [Int: (start: Int, end: Int)] = [:]
        for (_, location) in locations {
            let span = spans[location.sequence] ?? (location.offset, location.offset + location.length)
            spans[location.sequence] = (min(span.start, location.offset), max(span.end, location.offset + location.length))
        }
        var buffers: [Int: [UInt8]] = [:]
        for (sequence, span) in spans {
            buffers[sequence] = try readRange(layout.segment(gid, sequence), offset: span.start, count: span.end - span.start)
        }
        var result: [(id: String, value: JSONValue?)] = []
        result.reserveCapacity(locations.count)
        for (id, location) in locations {
            let path = layout.segment(gid, location.sequence)
            let buffer = buffers[location.sequence]!
            let start = location.offset - spans[location.sequence]!.start
            guard start + location.length <= buffer.count else {
                throw .corruptSegment(file: path, offset: location.offset, reason: "the file ends inside a committed record")
            }
            let parsed: Result<SegmentFormat.Record, Mutation.DecodingError> = buffer.withUnsafeBytes { raw in
                Result { () throws(Mutation.DecodingError) in
                    try SegmentFormat.parseRecord(UnsafeRawBufferPointer(rebasing: raw[start..<(start + location.length)]))
                }
            }
            guard case .success(let record) = parsed, record.id == id else {
                throw .corruptSegment(file: path, offset: location.offset, reason: "the record is not message \(id)")
            }
            result.append((id, record.value))
        }
        return result
    }

    /// The record in `bytes[range]`, a line that starts at file offset `offset`.
    static func parseLine(_ bytes: [UInt8], _ range: Range<Int>, path: String, offset: Int) throws(StoreError) -> SegmentFormat.Record {
        let parsed: Result<SegmentFormat.Record, Mutation.DecodingError> = bytes.withUnsafeBytes { raw in
            Result { () throws(Mutation.DecodingError) in try SegmentFormat.parseRecord(UnsafeRawBufferPointer(rebasing: raw[range])) }
        }
        switch parsed {
        case .success(let record): return record
        case .failure(let error): throw .corruptSegment(file: path, offset: offset, reason: error.reason)
        }
    }

    /// Calls `body` with each record line of `bytes` (which start at file offset `base`).
    static func eachRecord(
        _ bytes: [UInt8], base: Int, path: String, _ body: (RecordLocation, SegmentFormat.Record) -> Void
    ) throws(StoreError) {
        var lineStart = 0
        while lineStart < bytes.count {
            guard let newline = bytes[lineStart...].firstIndex(of: 0x0A) else {
                throw .corruptSegment(file: path, offset: base + lineStart, reason: "a committed record has no newline")
            }
            let parsed: Result<SegmentFormat.Record, Mutation.DecodingError> = bytes.withUnsafeBytes { raw in
                Result { () throws(Mutation.DecodingError) in
                    try SegmentFormat.parseRecord(UnsafeRawBufferPointer(rebasing: raw[lineStart..<newline]))
                }
            }
            switch parsed {
            case .success(let record):
                body(RecordLocation(sequence: 0, offset: base + lineStart, length: newline - lineStart), record)
            case .failure(let error):
                throw .corruptSegment(file: path, offset: base + lineStart, reason: error.reason)
            }
            lineStart = newline + 1
        }
    }

    private func location(_ segment: SegmentSummary, _ entry: SegmentFormat.IndexEntry) -> RecordLocation {
        RecordLocation(sequence: segment.sequence, offset: entry.offset, length: entry.length)
    }

    /// The parsed index of `segment`, from the cache when its committed length is unchanged.
    func index(_ gid: String, _ segment: SegmentSummary) throws(StoreError) -> [SegmentFormat.IndexEntry] {
        let key = layout.index(gid, segment.sequence) + "#\(segment.indexBytes)"
        if let cached = lock.withLock({ cache[key] }) { return cached }
        let entries = try parsedIndex(gid, segment)
        lock.withLock {
            cache[key] = entries
            cacheOrder.append(key)
            if cacheOrder.count > Self.cachedIndexes { cache[cacheOrder.removeFirst()] = nil }
        }
        return entries
    }

    /// The committed lines of `segment`'s index, read and parsed now.
    private func parsedIndex(_ gid: String, _ segment: SegmentSummary) throws(StoreError) -> [SegmentFormat.IndexEntry] {
        let path = layout.index(gid, segment.sequence)
        let bytes = try readRange(path, offset: 0, count: segment.indexBytes)
        guard bytes.count == segment.indexBytes else {
            throw .corruptSegment(file: path, offset: bytes.count, reason: "the index is shorter than its manifest says")
        }
        let entries: [SegmentFormat.IndexEntry]
        do {
            entries = try SegmentFormat.parseIndex(bytes)
        } catch {
            throw .corrupt(file: path, line: error.line, reason: "not an index line (offset length \"id\")")
        }
        // A record and its newline lie within the segment's committed bytes, so no read of a
        // page reaches past them (or asks for more memory than the segment holds).
        if let line = entries.firstIndex(where: { $0.offset + $0.length >= segment.bytes }) {
            throw .corrupt(file: path, line: line + 1, reason: "the record lies beyond the segment's \(segment.bytes) committed bytes")
        }
        // Pages are found by binary search, and single messages by the manifest's id range:
        // both must agree with the index.
        if let line = entries.indices.dropFirst().first(where: { entries[$0 - 1].id >= entries[$0].id }) {
            throw .corrupt(file: path, line: line + 1, reason: "the ids are not in ascending order")
        }
        guard entries.count == segment.records, entries.first.map({ $0.id == segment.first && entries.last!.id == segment.last }) ?? true else {
            throw .corrupt(file: path, line: 1, reason: "the index does not match its manifest entry (records, first or last id)")
        }
        return entries
    }

    /// Committed bytes of a file the manifest names: its absence is corruption, not a failed call.
    private func readRange(_ path: String, offset: Int, count: Int) throws(StoreError) -> [UInt8] {
        guard let fd = try io(FileSystem.openIfExists(path, flags: O_RDONLY)) else {
            throw .corruptSegment(file: path, offset: 0, reason: "the file is missing")
        }
        defer { FileSystem.close(fd) }
        return try io(FileSystem.read(fd, at: offset, count: count, path: path))
    }

    static func firstIndex(in entries: [SegmentFormat.IndexEntry], notBefore id: String) -> Int {
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].id < id { low = middle + 1 } else { high = middle }
        }
        return low
    }

    static func firstIndex(in entries: [SegmentFormat.IndexEntry], after id: String) -> Int {
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].id <= id { low = middle + 1 } else { high = middle }
        }
        return low
    }
}

/// A page of stored messages, ascending by id, and whether more lie beyond it.
public struct MessagePage: Sendable {
    public var records: [(id: String, value: JSONValue)]
    public var more: Bool
    /// The group the records are in, for a `.sentBy` query (nil when nothing was found).
    public var group: String? = nil
}
