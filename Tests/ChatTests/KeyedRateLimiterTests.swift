import Testing
@testable import Chat

private let second: UInt64 = 1_000_000_000

@Test func eachKeyHasItsOwnBucket() {
    var limiter = KeyedRateLimiter(rate: 1, burst: 2)
    let result1 = limiter.admit("a", now: 0)
    #expect(result1)
    let result2 = limiter.admit("a", now: 0)
    #expect(result2)
    let refused = limiter.admit("a", now: 0)
    #expect(!refused)
    #expect(limiter.secondsUntilToken("a", now: 0) == 1)
    let result3 = limiter.admit("b", now: 0)
    #expect(result3)
    let result4 = limiter.admit("a", now: second)
    #expect(result4)
}

@Test func refilledKeysAreForgottenSoTheTableStaysSmall() {
    var limiter = KeyedRateLimiter(rate: 1, burst: 1)
    for index in 0..<5000 { _ = limiter.admit("key \(index)", now: UInt64(index) * second) }
    #expect(limiter.count < 1100)
}
