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

@Test func aBucketRefillsAtItsRateUpToItsBurst() {
    var limiter = KeyedRateLimiter(rate: 2, burst: 3)
    let answers = { (count: Int, now: UInt64) in (0..<count).map { _ in limiter.admit("a", now: now) } }
    #expect(answers(4, 0) == [true, true, true, false])
    // Half a second is one token at 2 a second.
    #expect(answers(2, second / 2) == [true, false])
    // Ten seconds later the bucket holds its burst, not 20 tokens.
    #expect(answers(4, 10 * second) == [true, true, true, false])
    #expect(limiter.secondsUntilToken("a", now: 10 * second) == 1)
}
