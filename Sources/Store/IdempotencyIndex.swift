/// Which two string fields of a message record make its idempotency key: for the chat, the
/// sender (`user`) and the `clientId` it chose (docs/protocol.md, "Sending exactly once").
public struct IdempotencyFields: Sendable, Equatable {
    public var owner: String
    public var key: String

    public init(owner: String, key: String) {
        self.owner = owner
        self.key = key
    }
}

/// One record's idempotency key: the values of its `IdempotencyFields`.
public struct IdempotencyKey: Hashable, Sendable {
    public var owner: String
    public var key: String

    public init(owner: String, key: String) {
        self.owner = owner
        self.key = key
    }

    /// 64 bits of FNV-1a over both values: two keys that differ collide once in 2^64 pairs,
    /// and a collision only costs a read that finds nothing.
    var fingerprint: UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in owner.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        hash = (hash ^ 0xFF) &* 0x100_0000_01b3
        for byte in key.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash
    }
}

/// Which group holds the record of each idempotency key on disk, as 64-bit fingerprints: about
/// 20 bytes per keyed message instead of the keys and ids themselves, so the chat's memory
/// need not hold an entry per stored message.
///
/// A hit names the group to search; `MessageFiles.sentBy` confirms it in that group's indexes,
/// off the event loop. A miss is certain once the index is `ready`: built from the segment
/// indexes at start (on the compactor thread, before its first checkpoint), then kept up to
/// date by each checkpoint before it reports, so a message the chat drops from memory is
/// always here first. Entries of segments that retention deleted are removed; those of
/// deleted messages or groups stay and cost a read that finds nothing.
final class IdempotencyIndex: @unchecked Sendable {
    // @unchecked: every field is guarded by `monitor`.
    private let monitor = Monitor()
    private var groups: [UInt64: Int32] = [:]
    private var groupNumbers: [String: Int32] = [:]
    private var groupNames: [String] = []
    private var isReady = false

    /// Whether `key` may be on disk: true while the index is still being built.
    func mayContain(_ key: IdempotencyKey) -> Bool {
        monitor.withLock { !isReady || groups[key.fingerprint] != nil }
    }

    /// The group whose indexes may list `key`, waiting for the build to finish.
    func group(of key: IdempotencyKey) -> String? {
        monitor.withLock {
            while !isReady { monitor.wait() }
            return groups[key.fingerprint].map { groupNames[Int($0)] }
        }
    }

    func add(_ keys: [IdempotencyKey], group gid: String) {
        guard !keys.isEmpty else { return }
        monitor.withLock {
            let number = groupNumbers[gid] ?? {
                groupNames.append(gid)
                groupNumbers[gid] = Int32(groupNames.count - 1)
                return Int32(groupNames.count - 1)
            }()
            for key in keys { groups[key.fingerprint] = number }
        }
    }

    func remove(_ keys: [IdempotencyKey], group gid: String) {
        guard !keys.isEmpty else { return }
        monitor.withLock {
            guard let number = groupNumbers[gid] else { return }
            for key in keys where groups[key.fingerprint] == number { groups[key.fingerprint] = nil }
        }
    }

    /// The build is done: misses are certain from now on.
    func markReady() {
        monitor.withLock {
            isReady = true
            monitor.broadcast()
        }
    }

    /// Keys indexed (for tests).
    var count: Int { monitor.withLock { groups.count } }
}
