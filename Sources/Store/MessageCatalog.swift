/// What the checkpoint knows of one group's messages on disk: its segments, oldest first, and
/// the records that live outside the segment their id belongs to.
///
/// Records are appended to the newest ("open") segment in id order; a segment is sealed (no
/// longer appended to) once it reaches the store's `segmentBytes`. A change to a message that
/// is already in a segment (a receipt), or a message whose id is older than the newest stored
/// one, cannot go back into that segment: its new record is appended to the open segment and
/// `relocated` points at it. The index of each segment lists only its in-order records.
public struct GroupCatalog: Sendable, Equatable {
    public var segments: [SegmentSummary] = []
    /// Message id to the location of its newest record, for records outside the id order.
    public var relocated: [String: RecordLocation] = [:]

    public init() {}

    /// The highest id appended in order, which every later in-order record must exceed.
    var lastID: String? { segments.last(where: { $0.records > 0 })?.last }

    /// In-order records in all segments (a deleted or relocated message still counts once).
    public var recordCount: Int { segments.reduce(0) { $0 + $1.records } }

    /// The next segment number: one past the highest used, so a number is never reused.
    var nextSequence: Int { (segments.last?.sequence ?? 0) + 1 }
}

/// One segment file and its index, as far as the checkpoint has committed them.
public struct SegmentSummary: Sendable, Equatable {
    public var sequence: Int
    /// Committed length of the segment file; bytes past it are a crashed checkpoint's and are
    /// cut off at the next start.
    public var bytes: Int
    /// Committed length of the index file.
    public var indexBytes: Int
    /// In-order records (index lines).
    public var records: Int
    /// Index lines that carry an idempotency key: a segment without any is not read to build
    /// the `IdempotencyIndex` at start.
    public var keyed = 0
    /// Lowest and highest in-order id; empty while `records` is 0.
    public var first: String
    public var last: String
}

/// Where one record line is: segment number, byte offset and length (newline excluded).
public struct RecordLocation: Sendable, Equatable {
    public var sequence: Int
    public var offset: Int
    public var length: Int
}
