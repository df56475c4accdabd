import Testing
@testable import Server

private let second: UInt64 = 1_000_000_000

@Test func aBurstOfTwiceTheRatePassesThenMessagesAreDroppedWithOneNotice() {
    var rate = PublishRate(messagesPerSecond: 10, bytesPerSecond: 1 << 20, now: 0)
    for _ in 0..<20 {
        let result1 = rate.admit(bytes: 10, now: 0)
        #expect(result1 == .allow)
    }
    let result2 = rate.admit(bytes: 10, now: 0)
    #expect(result2 == .drop(notify: true))
    let result3 = rate.admit(bytes: 10, now: 0)
    #expect(result3 == .drop(notify: false))
}

@Test func threeTimesTheRateWithinASecondCloses() {
    var rate = PublishRate(messagesPerSecond: 10, bytesPerSecond: 1 << 20, now: 0)
    for _ in 0..<30 {
        let result4 = rate.admit(bytes: 1, now: 0)
        #expect(result4 != .close)
    }
    let result5 = rate.admit(bytes: 1, now: 0)
    #expect(result5 == .close)
}

@Test func theByteRateDropsAndClosesToo() {
    var rate = PublishRate(messagesPerSecond: 1000, bytesPerSecond: 1000, now: 0)
    let first = rate.admit(bytes: 1500, now: 0)
    #expect(first == .allow)
    let over = rate.admit(bytes: 600, now: 0)
    #expect(over == .drop(notify: true))
    let refilled = rate.admit(bytes: 800, now: second / 2)
    #expect(refilled == .allow, "half a second refills 500 bytes")
    let flood = rate.admit(bytes: 200, now: second / 2)
    #expect(flood == .close, "3,100 bytes within a second is over three times the rate")
}

@Test func aNewWindowForgivesAndTokensRefill() {
    var rate = PublishRate(messagesPerSecond: 10, bytesPerSecond: 1 << 20, now: 0)
    for _ in 0..<21 { _ = rate.admit(bytes: 1, now: 0) }
    let result10 = rate.admit(bytes: 1, now: second)
    #expect(result10 == .allow)
}
