import JSON

/// Applies mutations to the JSON document tree.
///
/// Rules, chosen so that every mutation is idempotent (see `Mutation`):
/// - Writing below a path creates the missing intermediate objects; an intermediate that is
///   not an object (a scalar in the way) is replaced by one, as Firebase does.
/// - Deleting the last child of an object leaves the object in place, empty (`{}`). Pruning
///   empty parents would make a group without messages vanish from `Messages` and the tree's
///   shape depend on history; keeping them is simpler and replays identically.
/// - Deleting below a missing or scalar parent does nothing and creates nothing.
/// - The empty path is the root: `set` replaces the tree, `merge` merges into it, `delete`
///   resets it to `{}`.
///
/// Updates are made in place: each level's dictionary is moved out of its enum before it is
/// changed, so it is uniquely referenced and copy-on-write never copies a level of the tree.
public enum DocumentTree {
    /// The tree of a new data folder: the four top-level collections, empty.
    public static let empty: JSONValue = ["Groups": [:], "Users": [:], "Messages": [:], "Auth": [:]]

    /// Applies `mutation` to `tree`.
    public static func apply(_ mutation: Mutation, to tree: inout JSONValue) {
        switch mutation {
        case .set(let path, let value):
            if path.isEmpty {
                tree = value.isNull ? .object([:]) : value
            } else if value.isNull {
                remove(at: path[...], in: &tree)
            } else {
                assign(value, at: path[...], in: &tree)
            }
        case .merge(let path, let children):
            modifyObject(at: path[...], in: &tree) { members in
                for (key, value) in children {
                    if value.isNull {
                        members.removeValue(forKey: key)
                    } else {
                        members[key] = value
                    }
                }
            }
        case .delete(let path):
            if path.isEmpty {
                tree = .object([:])
            } else {
                remove(at: path[...], in: &tree)
            }
        }
    }

    /// Applies each mutation in order.
    public static func apply(_ mutations: [Mutation], to tree: inout JSONValue) {
        for mutation in mutations {
            apply(mutation, to: &tree)
        }
    }

    /// Sets the value at a non-empty `path`, creating parents.
    private static func assign(_ value: JSONValue, at path: ArraySlice<String>, in node: inout JSONValue) {
        let key = path[path.endIndex - 1]
        modifyObject(at: path.dropLast(), in: &node) { members in
            members[key] = value
        }
    }

    /// Runs `body` on the members of the object at `path`, creating it and its parents
    /// (or replacing scalars in the way) as needed.
    private static func modifyObject(
        at path: ArraySlice<String>,
        in node: inout JSONValue,
        _ body: (inout [String: JSONValue]) -> Void
    ) {
        var members: [String: JSONValue]
        if case .object(let existing) = node {
            members = existing
        } else {
            members = [:]
        }
        // Drop the enum's reference so `members` is the only owner and mutates in place.
        node = .null
        if let key = path.first {
            modifyObject(at: path.dropFirst(), in: &members[key, default: .object([:])], body)
        } else {
            body(&members)
        }
        node = .object(members)
    }

    /// Removes the value at a non-empty `path`; a missing or non-object parent means there is
    /// nothing to remove.
    private static func remove(at path: ArraySlice<String>, in node: inout JSONValue) {
        guard case .object(var members) = node, let key = path.first else { return }
        if path.count == 1 {
            guard members.index(forKey: key) != nil else { return }
            node = .null
            members.removeValue(forKey: key)
            node = .object(members)
            return
        }
        guard members.index(forKey: key) != nil else { return }
        node = .null
        remove(at: path.dropFirst(), in: &members[key, default: .null])
        node = .object(members)
    }
}
