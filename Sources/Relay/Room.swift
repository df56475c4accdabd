/// The members of one room: contiguous for fast fan-out, with O(1) join and leave.
///
/// A value type owned by `RoomRegistry`; confined to the event loop thread like the registry.
public struct Room<Member: AnyObject> {
    /// Members in no particular order: leaving swaps the last member into the gap.
    public private(set) var members: ContiguousArray<Member> = []
    private var positions: [ObjectIdentifier: Int] = [:]

    public init() {}

    public var count: Int { members.count }
    public var isEmpty: Bool { members.isEmpty }

    public func contains(_ member: Member) -> Bool {
        positions[ObjectIdentifier(member)] != nil
    }

    /// Adds `member`; returns false when it was already there.
    @discardableResult
    public mutating func insert(_ member: Member) -> Bool {
        let key = ObjectIdentifier(member)
        guard positions[key] == nil else { return false }
        positions[key] = members.count
        members.append(member)
        return true
    }

    /// Removes `member`; returns false when it was not there.
    @discardableResult
    public mutating func remove(_ member: Member) -> Bool {
        guard let index = positions.removeValue(forKey: ObjectIdentifier(member)) else { return false }
        let last = members.removeLast()
        if index < members.count {
            members[index] = last
            positions[ObjectIdentifier(last)] = index
        }
        return true
    }
}
