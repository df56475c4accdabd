import JSON
import Store

/// Changes another node of the cluster made to users, credentials, groups and media records
/// (docs/cluster.md, "One history").
extension ChatState {
    /// Applies `mutation` to the one user, credentials, group or media record its path names:
    /// the record's stored form is changed as the document tree would be and read back, and
    /// the indexes follow. A mutation of a whole branch, or outside these four, changes nothing
    /// and returns false.
    mutating func applyToRecord(_ mutation: Mutation) -> Bool {
        let path = mutation.path
        guard path.count >= 2 else { return false }
        if applyToMembership(mutation) { return true }
        let key = path[1]
        func changed(_ old: JSONValue?) -> JSONValue? {
            var root: JSONValue = .object(old.map { [key: $0] } ?? [:])
            DocumentTree.apply(mutation.moved(to: Array(path.dropFirst())), to: &root)
            return root[key]
        }
        switch path[0] {
        case "Users":
            users[key] = changed(users[key]?.treeValue).flatMap(ChatUser.init(treeValue:))
        case "Auth":
            if let old = auth[key], emails[old.email] == key { emails[old.email] = nil }
            auth[key] = changed(auth[key]?.treeValue(now: .min)).flatMap(ChatAuth.init(treeValue:))
            if let new = auth[key] { emails[new.email] = key }
        case "Groups":
            if let old = groups[key] {
                if let invite = old.invite, invites[invite] == key { invites[invite] = nil }
                if let direct = old.direct, directs[direct] == key { directs[direct] = nil }
            }
            groups[key] = changed(groups[key]?.treeValue(online: nil)).flatMap(ChatGroup.init(treeValue:))
            if let new = groups[key] {
                if let invite = new.invite { invites[invite] = key }
                if let direct = new.direct { directs[direct] = key }
            }
        case "Media":
            if let old = media[key] {
                let left = (mediaUsage[old.owner] ?? 0) - old.bytes
                mediaUsage[old.owner] = left > 0 ? left : nil
            }
            media[key] = changed(media[key]?.treeValue).flatMap(MediaRecord.init(treeValue:))
            if let new = media[key] { mediaUsage[new.owner, default: 0] += new.bytes }
        default:
            return false
        }
        return true
    }
}

extension ChatState {
    /// A join or a leave, `Groups/<gid>/userList/<uid>` or `Users/<uid>/groupList/<gid>` set
    /// or deleted, changes one set in place: a group of 50,000 members is not rebuilt for it.
    /// False for any other change.
    private mutating func applyToMembership(_ mutation: Mutation) -> Bool {
        let path = mutation.path
        guard path.count == 4 else { return false }
        let isMember: Bool
        switch mutation {
        case .set(_, let value): isMember = !value.isNull
        case .delete: isMember = false
        case .merge: return false
        }
        switch (path[0], path[2]) {
        case ("Groups", "userList") where groups[path[1]] != nil:
            if isMember { groups[path[1]]?.members.insert(path[3]) } else { groups[path[1]]?.members.remove(path[3]) }
        case ("Users", "groupList") where users[path[1]] != nil:
            if isMember { users[path[1]]?.groups.insert(path[3]) } else { users[path[1]]?.groups.remove(path[3]) }
        default:
            return false
        }
        return true
    }
}

extension Mutation {
    /// The same change at `path`.
    func moved(to path: [String]) -> Mutation {
        switch self {
        case .set(_, let value): .set(path: path, value: value)
        case .merge(_, let value): .merge(path: path, value: value)
        case .delete: .delete(path: path)
        }
    }
}
