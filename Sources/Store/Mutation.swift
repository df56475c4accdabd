import JSON

/// One change to the document tree: one line of `journal.jsonl`.
///
/// Every mutation assigns absolute values: `set` writes a value, `merge` writes several
/// children, `delete` removes a subtree. None of them reads the old value (there is no
/// "increment"), so applying a mutation twice gives the same tree as applying it once, and
/// replaying a journal over a snapshot that already contains some or all of its effects gives
/// the same tree as replaying it over the older snapshot. That is what makes a crash between
/// the snapshot rename and the journal truncation of a compaction harmless: start-up replays
/// the old journal over the new snapshot and arrives at the same state.
///
/// The chat service must keep that property: compute new values on the event loop and journal
/// the results, never a relative operation.
public enum Mutation: Sendable, Equatable {
    /// Replaces the value at `path`; setting `.null` deletes it (as Firebase does).
    case set(path: [String], value: JSONValue)
    /// Sets each child of the object at `path`; a child given as `.null` is deleted.
    case merge(path: [String], value: [String: JSONValue])
    /// Removes the value at `path`, if there is one.
    case delete(path: [String])

    /// The path the mutation applies to.
    public var path: [String] {
        switch self {
        case .set(let path, _), .merge(let path, _), .delete(let path):
            return path
        }
    }
}
