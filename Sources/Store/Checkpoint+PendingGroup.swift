import Glibc
import JSON

extension Checkpoint {
    /// One group's changes since the last commit: per message id, its new value serialized
    /// (nil for a deletion) and its idempotency key.
    ///
    /// New messages arrive in ascending id order (ids sort by creation), so almost every record
    /// is an append to `ordered`, found again by binary search, and `forEachRecord` needs no
    /// sort: a dictionary keyed by id, sorted at commit, took a third of a checkpoint's time
    /// hashing and comparing ids (perf, 64 durable senders). Only a record whose id sorts below
    /// `ordered`'s last and is not in it (a receipt on a message already in a segment, a clock
    /// that went back), or whose id is not plain ASCII, goes to `unordered`.
    struct PendingGroup {
        /// A record: where its value's serialized bytes stand in `storage` (nil for a
        /// deletion), and its idempotency key.
        ///
        /// Records and `ordered`'s entries are structs: as tuples, every array of them was
        /// destroyed through the runtime's generic `tuple_destroy`, element by element (~300
        /// instructions per record, callgrind).
        struct Record {
            var value: Range<Int>?
            var key: IdempotencyKey?
        }

        /// A record of `ordered`, and where its id's bytes stand in `storage`.
        private struct OrderedRecord {
            var id: Range<Int>
            var record: Record
        }

        /// A record's id: where its bytes stand in `storage` (an id in `ordered`), or the
        /// string itself (one in `unordered`).
        enum RecordID {
            case stored(Range<Int>)
            case named(String)
        }

        /// The bytes of every value set since the last commit, one after another, and of the
        /// ids in `ordered`; a record set again leaves its old bytes behind. One buffer per
        /// group instead of an array per record and a string per id, which a checkpoint of
        /// 300,000 messages allocated, reference-counted and freed one by one (BENCHMARKS.md).
        private(set) var storage: [UInt8] = []
        /// Records in ascending id order, each id once. Their ids are ASCII without a quote, a
        /// backslash or a control character (`isOrderable`): compared as bytes, they sort as
        /// the strings do, and they stand in a JSON string as they are.
        private var ordered: [OrderedRecord] = []
        /// Records with ids below `ordered.last`'s and not in it, or not orderable, each id once.
        private var unordered: [String: Record] = [:]
        /// Whether `unordered` holds an id outside ASCII: one may be a string equal to an ASCII
        /// id (U+212A KELVIN SIGN is "K" to a string), which is then the same id.
        private var unorderedHasNonASCII = false
        /// The group was replaced or deleted: its stored segments no longer count.
        var dropsStored = false
        /// False after a deletion of the whole group with nothing written since.
        var exists = true

        init(dropsStored: Bool = false, exists: Bool = true) {
            self.dropsStored = dropsStored
            self.exists = exists
        }

        /// The pending value of message `id`: nil when none is pending, `.some(nil)` when
        /// its deletion is.
        func value(of id: String) -> [UInt8]?? {
            let record = orderedIndex(of: id).map { ordered[$0].record } ?? unordered[id]
            return record.map { record in record.value.map { Array(storage[$0]) } }
        }

        /// The id as a string.
        func name(of id: RecordID) -> String {
            switch id {
            case .stored(let range): String(decoding: storage[range], as: UTF8.self)
            case .named(let name): name
            }
        }

        /// A record written: the group exists, and the pending record of the message whose
        /// id's UTF-8 is `id` is this one.
        mutating func write(_ id: UnsafeRawBufferPointer, copying value: UnsafeRawBufferPointer, key: IdempotencyKey?) {
            exists = true
            put(id, value, key: key)
        }

        /// Sets the pending record of message `id` to `value` (nil: its deletion), replacing
        /// one pending before.
        mutating func set(_ id: String, _ value: [UInt8]?, key: IdempotencyKey?) {
            var id = id
            id.withUTF8 { utf8 in
                guard let value else { return put(UnsafeRawBufferPointer(utf8), nil, key: key) }
                value.withUnsafeBytes { put(UnsafeRawBufferPointer(utf8), $0, key: key) }
            }
        }

        /// Copies the id and the value in: an orderable id that sorts after every other joins
        /// `ordered` (nearly every message), any other replaces its record wherever it is.
        private mutating func put(_ id: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer?, key: IdempotencyKey?) {
            guard Self.isOrderable(id), sortsAfterOrdered(id) else {
                return place(String(decoding: id, as: UTF8.self), Record(value: value.map { stored($0) }, key: key))
            }
            if unorderedHasNonASCII {
                let name = String(decoding: id, as: UTF8.self)
                if unordered[name] != nil { return unordered[name] = Record(value: value.map { stored($0) }, key: key) }
            }
            let idRange = stored(id)
            ordered.append(OrderedRecord(id: idRange, record: Record(value: value.map { stored($0) }, key: key)))
        }

        /// Appends `bytes` to `storage` and returns where they stand.
        private mutating func stored(_ bytes: UnsafeRawBufferPointer) -> Range<Int> {
            let start = storage.count
            storage.append(contentsOf: bytes)
            return start..<storage.count
        }

        /// Replaces the record of an id that does not sort after every id in `ordered`, or is
        /// not orderable.
        private mutating func place(_ id: String, _ record: Record) {
            if let index = orderedIndex(of: id) {
                ordered[index].record = record
            } else {
                unordered[id] = record
                if !unorderedHasNonASCII { unorderedHasNonASCII = !Self.isASCII(id) }
            }
        }

        /// Calls `body` with every pending record, in ascending id order; the records of
        /// `ordered` are handed out where they stand, without an array of them all.
        func forEachRecord(_ body: (RecordID, Record) -> Void) {
            guard !unordered.isEmpty else {
                for entry in ordered { body(.stored(entry.id), entry.record) }
                return
            }
            let others = unordered.sorted { $0.key < $1.key }
            var next = 0
            storage.withUnsafeBytes { storage in
                for entry in ordered {
                    let idBytes = UnsafeRawBufferPointer(rebasing: storage[entry.id])
                    while next < others.count && Self.precedes(others[next].key, idBytes) {
                        body(.named(others[next].key), others[next].value)
                        next += 1
                    }
                    body(.stored(entry.id), entry.record)
                }
            }
            for (id, record) in others[next...] { body(.named(id), record) }
        }

        /// Whether `name` sorts before the orderable id `id`: compared as bytes when `name` is
        /// ASCII (as the strings would be), as strings otherwise.
        private static func precedes(_ name: String, _ id: UnsafeRawBufferPointer) -> Bool {
            guard isASCII(name) else { return name < String(decoding: id, as: UTF8.self) }
            var name = name
            return name.withUTF8 { compare(UnsafeRawBufferPointer($0), id) < 0 }
        }

        /// Whether `id` sorts after the last id of `ordered` (or `ordered` is empty).
        private func sortsAfterOrdered(_ id: UnsafeRawBufferPointer) -> Bool {
            guard let last = ordered.last?.id else { return true }
            return storage.withUnsafeBytes { Self.compare(id, UnsafeRawBufferPointer(rebasing: $0[last])) > 0 }
        }

        /// The position of `id` in `ordered`, if there: found by its bytes, or for an id outside
        /// ASCII by comparing strings (`ordered`'s order is theirs).
        private func orderedIndex(of id: String) -> Int? {
            guard !ordered.isEmpty else { return nil }
            guard Self.isASCII(id) else {
                func name(_ index: Int) -> String { String(decoding: storage[ordered[index].id], as: UTF8.self) }
                let index = firstIndex { name($0) >= id }
                return index < ordered.count && name(index) == id ? index : nil
            }
            var id = id
            return id.withUTF8 { utf8 in
                storage.withUnsafeBytes { storage in
                    func order(_ index: Int) -> Int {
                        Self.compare(UnsafeRawBufferPointer(rebasing: storage[ordered[index].id]), UnsafeRawBufferPointer(utf8))
                    }
                    let index = firstIndex { order($0) >= 0 }
                    return index < ordered.count && order(index) == 0 ? index : nil
                }
            }
        }

        /// The first position in `ordered` whose id `isAtOrAfter` says is not below the one
        /// looked for (binary search: ids ascend), or `ordered.count`.
        private func firstIndex(_ isAtOrAfter: (Int) -> Bool) -> Int {
            var low = 0
            var high = ordered.count
            while low < high {
                let middle = (low + high) / 2
                if isAtOrAfter(middle) { high = middle } else { low = middle + 1 }
            }
            return low
        }

        /// Whether `id` can stand in `ordered`: plain as JSON escaping sees it (no quote,
        /// backslash or control character), so it is written as it is, and ASCII, whose byte
        /// order is the strings' order.
        static func isOrderable(_ id: UnsafeRawBufferPointer) -> Bool {
            let utf8 = id.assumingMemoryBound(to: UInt8.self)
            return JSONEncoding.isPlain(utf8) && !utf8.contains { $0 >= 0x80 }
        }

        private static func isASCII(_ id: String) -> Bool { id.utf8.allSatisfy { $0 < 0x80 } }

        /// Byte-wise order of two ids: negative, zero or positive.
        private static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
            let common = min(a.count, b.count)
            if common > 0 {
                let order = memcmp(a.baseAddress!, b.baseAddress!, common)
                if order != 0 { return Int(order) }
            }
            return a.count - b.count
        }
    }
}
