import Testing
import WebSocket
@testable import Server

private let second: UInt64 = 1_000_000_000
private let timeouts = ConnectionLifecycle.Timeouts(handshake: 10 * second, idle: 60 * second, ping: 25 * second, close: 2 * second)

private func opened(at now: UInt64 = 0) -> ConnectionLifecycle {
    var lifecycle = ConnectionLifecycle(now: now, timeouts: timeouts)
    lifecycle.upgraded(now: now)
    return lifecycle
}

@Test func anHTTPConnectionIsDroppedAtItsDeadlineAndKeepAliveMovesIt() {
    var lifecycle = ConnectionLifecycle(now: 0, timeouts: timeouts)
    #expect(lifecycle.tick(now: 10 * second) == .none)
    #expect(lifecycle.responded(keepAlive: true, now: 5 * second) == .none)
    #expect(lifecycle.tick(now: 11 * second) == .none)
    #expect(lifecycle.tick(now: 15 * second + 1) == .closeSocket)
    #expect(lifecycle.isClosed)
}

@Test func aResponseWithoutKeepAliveIsWrittenThenTheSocketShut() {
    var lifecycle = ConnectionLifecycle(now: 0, timeouts: timeouts)
    #expect(lifecycle.responded(keepAlive: false, now: 0) == .finishWriting)
    #expect(!lifecycle.acceptsOutput)
    #expect(lifecycle.writes)
    #expect(lifecycle.flushed() == .shutDownWrite)
    #expect(!lifecycle.writes)
    #expect(lifecycle.ended() == .closeSocket)
    #expect(lifecycle.ended() == .none)
}

@Test func aServerCloseSendsACloseFrameOnceAndDropsAnHTTPConnection() {
    var lifecycle = opened()
    #expect(lifecycle.close(.goingAway, reason: "bye", now: 0) == .sendClose(.goingAway, reason: "bye"))
    #expect(lifecycle.close(.policyViolation, reason: "again", now: 0) == .none)
    #expect(lifecycle.finish(now: 0) == .none)

    var http = ConnectionLifecycle(now: 0, timeouts: timeouts)
    #expect(http.close(.goingAway, reason: "bye", now: 0) == .closeSocket)
}

@Test func thePeersCloseReplyClosesTheSocketOnceOurSideIsShut() {
    var lifecycle = opened()
    _ = lifecycle.close(.goingAway, reason: "bye", now: 0)
    #expect(lifecycle.flushed() == .shutDownWrite)
    #expect(lifecycle.finish(now: 1) == .closeSocket)
    #expect(lifecycle.isClosed)
}

@Test func aCloseReplyBeforeOurFrameIsWrittenWaitsForTheFlush() {
    var lifecycle = opened()
    _ = lifecycle.close(.goingAway, reason: "bye", now: 0)
    #expect(lifecycle.finish(now: 1) == .none)
    #expect(lifecycle.flushed() == .shutDownWrite)
    #expect(lifecycle.flushed() == .none)
}

@Test func aClosingConnectionIsDroppedAfterTheCloseTimeout() {
    var lifecycle = opened()
    _ = lifecycle.close(.goingAway, reason: "bye", now: 0)
    _ = lifecycle.flushed()
    #expect(lifecycle.tick(now: 2 * second) == .none)
    #expect(lifecycle.tick(now: 2 * second + 1) == .closeSocket)
}

@Test func aSilentWebSocketIsPingedEveryIntervalThenClosedAsIdle() {
    var lifecycle = opened()
    #expect(lifecycle.tick(now: 24 * second) == .none)
    #expect(lifecycle.tick(now: 25 * second) == .sendPing)
    #expect(lifecycle.tick(now: 26 * second) == .none)
    #expect(lifecycle.tick(now: 50 * second) == .sendPing)
    lifecycle.heard(at: 55 * second)
    #expect(lifecycle.tick(now: 70 * second) == .none)
    #expect(lifecycle.tick(now: 115 * second + 1) == .sendClose(.goingAway, reason: "idle timeout"))
}

@Test func aClockReadBeforeTheLastReadCountsAsNoSilence() {
    var lifecycle = opened(at: 100 * second)
    lifecycle.heard(at: 200 * second)
    #expect(lifecycle.tick(now: 150 * second) == .none)
}

@Test func aPeerWhoseSocketRefusesOurBytesForTheIdleTimeoutIsClosedWith1008() {
    var lifecycle = opened()
    lifecycle.refused(now: 10 * second)
    lifecycle.heard(at: 65 * second)
    #expect(lifecycle.tick(now: 65 * second) == .none)
    lifecycle.refused(now: 66 * second)
    #expect(lifecycle.stalledSince == 10 * second, "the first refusal counts")
    #expect(lifecycle.tick(now: 70 * second + 1) == .sendClose(.policyViolation, reason: "not reading"))
}

@Test func aSocketThatDrainsIsNotStalled() {
    var lifecycle = opened()
    lifecycle.refused(now: 10 * second)
    lifecycle.drained()
    lifecycle.heard(at: 71 * second)
    #expect(lifecycle.tick(now: 71 * second) == .none)
}

@Test func aKeepAliveConnectionEndsAfterItsRequestLimit() {
    var lifecycle = ConnectionLifecycle(now: 0, timeouts: timeouts, maxRequests: 3)
    for _ in 0..<2 {
        #expect(lifecycle.mayKeepAlive)
        #expect(lifecycle.responded(keepAlive: true, now: 0) == .none)
    }
    #expect(!lifecycle.mayKeepAlive, "the third answer is the last")
    #expect(lifecycle.responded(keepAlive: false, now: 0) == .finishWriting)
}

@Test func aStreamIsNeitherPingedNorTimedOutButEndsWhenItsReaderStalls() {
    var lifecycle = ConnectionLifecycle(now: 0, timeouts: timeouts)
    lifecycle.streamed()
    #expect(lifecycle.tick(now: 600 * second) == .none, "a quiet reader of a stream is not idle")
    lifecycle.refused(now: 600 * second)
    #expect(lifecycle.tick(now: 660 * second) == .none)
    #expect(lifecycle.tick(now: 660 * second + 1) == .finishWriting)
    #expect(!lifecycle.acceptsOutput)
}
