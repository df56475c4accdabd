import Testing
@testable import Chat

private let second: UInt64 = 1_000_000_000

@Test func freeFailuresThenADoublingWait() {
    var throttle = LoginThrottle()
    for _ in 0..<5 { throttle.failed("k", freeFailures: 5, now: 0) }
    #expect(throttle.secondsToWait(["k"], now: 0) == 0)
    throttle.failed("k", freeFailures: 5, now: 0)
    #expect(throttle.secondsToWait(["k"], now: 0) == 1)
    throttle.failed("k", freeFailures: 5, now: second)
    #expect(throttle.secondsToWait(["other", "k"], now: second) == 2)
    throttle.succeeded("k")
    #expect(throttle.secondsToWait(["k"], now: second) == 0)
}

@Test func theWaitStopsAtFifteenMinutesAndOldFailuresAreForgotten() {
    var throttle = LoginThrottle()
    for _ in 0..<40 { throttle.failed("k", freeFailures: 0, now: 0) }
    #expect(throttle.secondsToWait(["k"], now: 0) == 900)
    throttle.failed("k", freeFailures: 5, now: 2 * LoginThrottle.forgetAfter)
    #expect(throttle.secondsToWait(["k"], now: 2 * LoginThrottle.forgetAfter) == 0)
}
