import Glibc
import Posix
import Testing

@Test func aThreadsCPUClockCountsItsWorkAndNotItsSleep() {
    let cpuBefore = SystemClock.threadCPUNanoseconds()
    var sum: UInt64 = 0
    for _ in 0..<200_000 { sum &+= SystemClock.monotonicNanoseconds() }
    let cpuAfterWork = SystemClock.threadCPUNanoseconds()
    #expect(sum != 0)
    #expect(cpuAfterWork > cpuBefore, "200,000 clock reads take CPU time")

    let wallBeforeSleep = SystemClock.monotonicNanoseconds()
    usleep(200_000)
    let slept = SystemClock.monotonicNanoseconds() - wallBeforeSleep
    #expect(slept >= 200_000_000)
    #expect(SystemClock.threadCPUNanoseconds() - cpuAfterWork < slept / 2, "a sleeping thread uses next to no CPU")
}
