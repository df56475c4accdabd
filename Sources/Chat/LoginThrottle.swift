/// Slows password guessing: failed logins counted per account and per client address, with a
/// doubling wait once a key has used up its free failures.
///
/// A key (`account:<email>` or `address:<ip>`) may fail `freeFailures` times; each failure
/// after that closes it for 1, 2, 4, ... seconds, up to `maxBackoff`. Attempts while closed are
/// refused before any hashing (`rate_limited`). A success clears the account's count; a key
/// quiet for `forgetAfter` is forgotten, so the table holds only recent offenders.
struct LoginThrottle {
    private struct Record {
        var failures: Int
        var blockedUntil: UInt64
        var lastFailure: UInt64
    }

    /// Failures allowed per account, and per address (higher: many people share an address).
    static let accountFreeFailures = 5
    static let addressFreeFailures = 20
    static let maxBackoff: UInt64 = 15 * 60 * 1_000_000_000
    static let forgetAfter: UInt64 = 60 * 60 * 1_000_000_000

    private var records: [String: Record] = [:]
    private var sweepAt = 1024

    static func accountKey(_ email: String) -> String { "account:" + email }
    static func addressKey(_ address: String) -> String { "address:" + address }

    /// Seconds the caller must still wait before trying `keys` again (0: it may try now).
    func secondsToWait(_ keys: [String], now: UInt64) -> Int {
        var wait: UInt64 = 0
        for key in keys {
            guard let record = records[key], record.blockedUntil > now else { continue }
            wait = max(wait, record.blockedUntil - now)
        }
        return Int((wait + 999_999_999) / 1_000_000_000)
    }

    /// A failed attempt under `key`, which allows `freeFailures` before it starts to wait.
    mutating func failed(_ key: String, freeFailures: Int, now: UInt64) {
        var record = records[key].flatMap { now &- $0.lastFailure < Self.forgetAfter ? $0 : nil }
            ?? Record(failures: 0, blockedUntil: 0, lastFailure: now)
        record.failures += 1
        record.lastFailure = now
        if record.failures > freeFailures {
            let doublings = min(record.failures - freeFailures - 1, 20)
            record.blockedUntil = now + min(Self.maxBackoff, 1_000_000_000 << UInt64(doublings))
        }
        records[key] = record
        if records.count >= sweepAt {
            records = records.filter { now &- $0.value.lastFailure < Self.forgetAfter }
            sweepAt = max(1024, 2 * records.count)
        }
    }

    /// A successful login clears `key`.
    mutating func succeeded(_ key: String) {
        records[key] = nil
    }
}
