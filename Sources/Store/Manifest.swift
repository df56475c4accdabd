import JSON

/// The checkpoint's table of contents, `manifest.json`: replaced atomically (written aside,
/// fsynced, renamed), so it is the one commit point of every checkpoint and of the migration.
///
/// ```json
/// {"format":2,"journal":7,"documents":["Auth","Groups","Users"],
///  "messages":{"<gid>":{"segments":[{"sequence":1,"bytes":1048601,"indexBytes":190211,
///                                    "records":5130,"keyed":5100,"first":"-Nq..","last":"-Nr.."}],
///                       "relocated":{"<mid>":[3,88211,141]}}}}
/// ```
/// `journal` is the highest rotated journal generation whose mutations the files already hold.
struct Manifest: Sendable, Equatable {
    static let format = 2

    var generation = 0
    /// Top-level keys other than `Messages`, each in `documents/<key>.json`.
    var documents: [String] = []
    var groups: [String: GroupCatalog] = [:]

    var serialized: [UInt8] {
        var groupValues: [String: JSONValue] = [:]
        for (gid, catalog) in groups {
            let segments: [JSONValue] = catalog.segments.map { segment in
                [
                    "sequence": .integer(Int64(segment.sequence)), "bytes": .integer(Int64(segment.bytes)),
                    "indexBytes": .integer(Int64(segment.indexBytes)), "records": .integer(Int64(segment.records)),
                    "keyed": .integer(Int64(segment.keyed)), "first": .string(segment.first), "last": .string(segment.last),
                ]
            }
            var relocated: [String: JSONValue] = [:]
            for (mid, location) in catalog.relocated {
                relocated[mid] = .array([
                    .integer(Int64(location.sequence)), .integer(Int64(location.offset)), .integer(Int64(location.length)),
                ])
            }
            groupValues[gid] = ["segments": .array(segments), "relocated": .object(relocated)]
        }
        let value: JSONValue = [
            "format": .integer(Int64(Self.format)), "journal": .integer(Int64(generation)),
            "documents": .array(documents.sorted().map { .string($0) }), "messages": .object(groupValues),
        ]
        return value.serialized + [0x0A]
    }

    /// Reads a parsed manifest; the error is a phrase for `StoreError.corrupt`.
    init(_ value: JSONValue) throws(Mutation.DecodingError) {
        guard value["format"]?.int64Value == Int64(Self.format) else {
            throw .init(reason: "the manifest is not format \(Self.format)")
        }
        guard let generation = value["journal"]?.int64Value, case .array(let documents)? = value["documents"],
            case .object(let groups)? = value["messages"]
        else { throw .init(reason: "the manifest lacks \"journal\", \"documents\" or \"messages\"") }
        guard generation >= 0 else { throw .init(reason: "the manifest's journal generation is negative") }
        self.generation = Int(generation)
        self.documents = documents.compactMap(\.stringValue)
        for (gid, group) in groups {
            var catalog = GroupCatalog()
            guard case .array(let segments)? = group["segments"], case .object(let relocated)? = group["relocated"] else {
                throw .init(reason: "group \(gid) lacks \"segments\" or \"relocated\"")
            }
            for segment in segments {
                guard let sequence = segment["sequence"]?.int64Value, let bytes = segment["bytes"]?.int64Value,
                    let indexBytes = segment["indexBytes"]?.int64Value, let records = segment["records"]?.int64Value,
                    let first = segment["first"]?.stringValue, let last = segment["last"]?.stringValue
                else { throw .init(reason: "a segment of group \(gid) is incomplete") }
                let keyed = segment["keyed"]?.int64Value ?? 0
                guard sequence > (catalog.segments.last.map { Int64($0.sequence) } ?? 0), sequence <= Self.largestNumber,
                    [bytes, indexBytes, records, keyed].allSatisfy({ (0...Self.largestNumber).contains($0) }), keyed <= records
                else { throw .init(reason: "segment \(sequence) of group \(gid) has numbers out of range or order") }
                catalog.segments.append(SegmentSummary(
                    sequence: Int(sequence), bytes: Int(bytes), indexBytes: Int(indexBytes), records: Int(records),
                    keyed: Int(keyed), first: first, last: last))
            }
            for (mid, location) in relocated {
                guard case .array(let parts) = location, parts.count == 3, let sequence = parts[0].int64Value,
                    let offset = parts[1].int64Value, let length = parts[2].int64Value
                else { throw .init(reason: "relocated record \(mid) of group \(gid) is not [sequence, offset, length]") }
                // The record and its newline lie within a segment's committed bytes.
                guard let home = catalog.segments.first(where: { Int64($0.sequence) == sequence }), (0...Self.largestNumber).contains(offset),
                    (0...Self.largestNumber).contains(length), offset + length < Int64(home.bytes)
                else { throw .init(reason: "relocated record \(mid) of group \(gid) lies outside its group's segments") }
                catalog.relocated[mid] = RecordLocation(sequence: Int(sequence), offset: Int(offset), length: Int(length))
            }
            self.groups[gid] = catalog
        }
    }

    init() {}

    /// The largest segment number, length or count a manifest may hold (256 TiB): any sum of
    /// two stays far from overflowing.
    static let largestNumber: Int64 = 1 << 48
}
