import Glibc
import Posix

/// The segment a group's flush appends to: the record and index lines for it, and its summary
/// as they grow.
///
/// The counters stay in plain fields until `summary` is asked for. Updated in place in the
/// catalog's array of `SegmentSummary`, and with each record's lines appended to a dictionary of
/// buffers per segment, every record retained and released the summary's strings and hashed the
/// segment number several times: `swift_retain` under `flush` alone was 11% of the compactor's
/// samples (perf, 64 durable senders). Since then, writing and committing a 64 MiB checkpoint
/// takes 8% less CPU (BENCHMARKS.md).
struct SegmentAppend {
    let sequence: Int
    /// False for a segment this flush starts (its files may be left over from a crash).
    let continues: Bool
    /// The committed lengths the new lines follow: 0 for a new segment.
    let segmentOffset: Int
    let indexOffset: Int
    private(set) var segment: [UInt8] = []
    private(set) var index: [UInt8] = []
    private var records: Int
    private var keyed: Int
    private var first: String
    /// The last id's UTF-8, kept in one buffer: a string per record cost an allocation.
    private var last: [UInt8]

    init(continuing summary: SegmentSummary) {
        sequence = summary.sequence
        continues = true
        segmentOffset = summary.bytes
        indexOffset = summary.indexBytes
        records = summary.records
        keyed = summary.keyed
        first = summary.first
        last = Array(summary.last.utf8)
    }

    init(starting sequence: Int) {
        self.sequence = sequence
        continues = false
        segmentOffset = 0
        indexOffset = 0
        records = 0
        keyed = 0
        first = ""
        last = []
    }

    /// The segment's length with the lines appended so far.
    var bytes: Int { segmentOffset + segment.count }

    var summary: SegmentSummary {
        SegmentSummary(
            sequence: sequence, bytes: bytes, indexBytes: indexOffset + index.count, records: records, keyed: keyed,
            first: first, last: String(decoding: last, as: UTF8.self))
    }

    /// Appends an in-order record and its index line: `id` a string, or the UTF-8 of one that
    /// needs no escaping (`Checkpoint.PendingGroup.isOrderable`) in `storage`.
    mutating func append(_ id: Checkpoint.PendingGroup.RecordID, in storage: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer?,
                         key: IdempotencyKey?) {
        let offset = bytes
        let (length, quotedID): (Int, Range<Int>)
        switch id {
        case .stored(let range):
            let utf8 = UnsafeRawBufferPointer(rebasing: storage[range])
            (length, quotedID) = SegmentFormat.appendRecord(plainID: utf8, value: value, to: &segment)
            last.removeAll(keepingCapacity: true)
            last.append(contentsOf: utf8)
        case .named(let name):
            (length, quotedID) = SegmentFormat.appendRecord(id: name, value: value, to: &segment)
            last = Array(name.utf8)
        }
        SegmentFormat.appendIndexLine(offset: offset, length: length, quotedID: segment[quotedID], key: key, to: &index)
        if records == 0 { first = String(decoding: last, as: UTF8.self) }
        records += 1
        if key != nil { keyed += 1 }
    }

    /// Appends a record outside the id order (no index line) and returns where it is.
    mutating func appendMoved(_ id: String, value: UnsafeRawBufferPointer?) -> RecordLocation {
        let offset = bytes
        let length = SegmentFormat.appendRecord(id: id, value: value, moved: true, to: &segment).length
        return RecordLocation(sequence: sequence, offset: offset, length: length)
    }
}

/// The segments one group's flush appends to, and how their lines reach the disk.
struct SegmentWrites {
    private var appends: [SegmentAppend] = []

    /// Takes a segment the flush has finished with and returns its summary for the catalog.
    mutating func add(_ append: SegmentAppend) -> SegmentSummary {
        if !append.segment.isEmpty { appends.append(append) }
        return append.summary
    }

    /// Appends at each file's committed length (cutting off what a crashed checkpoint left
    /// there). Paced, flushes each file in pieces as it goes and each folder that got new files
    /// at once; otherwise notes them for `commit` to flush.
    func write(_ gid: String, layout: StoreLayout, pacedBytes: Int?, into unsynced: inout Checkpoint.Unsynced) throws(StoreError) -> Int {
        guard !appends.isEmpty else { return 0 }
        let folder = layout.group(gid)
        let folderIsNew = !FileSystem.exists(folder)
        if folderIsNew { try io(FileSystem.makeDirectories(folder)) }
        var appended = 0
        for append in appends {
            let segmentPath = layout.segment(gid, append.sequence)
            let indexPath = layout.index(gid, append.sequence)
            try write(append.segment, to: segmentPath, at: append.segmentOffset, pacedBytes: pacedBytes)
            try write(append.index, to: indexPath, at: append.indexOffset, pacedBytes: pacedBytes)
            if pacedBytes == nil { unsynced.files += [segmentPath, indexPath] }
            appended += append.segment.count
        }
        var folders: [String] = []
        if appends.contains(where: { !$0.continues }) || folderIsNew { folders.append(folder) }
        if folderIsNew { folders.append(layout.messages) }
        if pacedBytes == nil {
            unsynced.folders.formUnion(folders)
        } else {
            for folder in folders { try io(FileSystem.syncDirectory(folder)) }
        }
        return appended
    }

    private func write(_ bytes: [UInt8], to path: String, at offset: Int, pacedBytes: Int?) throws(StoreError) {
        let fd = try io(FileSystem.open(path, flags: O_WRONLY | O_CREAT, mode: 0o600))
        defer { FileSystem.close(fd) }
        try io(FileSystem.truncate(fd, to: offset, path: path))
        guard let pacedBytes else { return try io(FileSystem.write(fd, bytes, at: offset, path: path)) }
        var written = 0
        repeat {
            // A pause between pieces leaves the disk to the journal's fsyncs in between.
            if written > 0 { usleep(Checkpoint.pauseMicroseconds) }
            let piece = bytes[written..<min(bytes.count, written + pacedBytes)]
            try io(FileSystem.write(fd, piece, at: offset + written, path: path))
            try io(FileSystem.writeOut(fd, offset: offset + written, count: piece.count, path: path))
            written += piece.count
        } while written < bytes.count
        // The data is on the device already: this flush carries the new size and the cache.
        try io(FileSystem.fdatasync(fd, path: path))
    }
}
