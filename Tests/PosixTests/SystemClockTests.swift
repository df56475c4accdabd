import Glibc
import Posix
import Testing

@Test func aThreadsCPUClockCountsItsWorkAndNotItsSleep() {
    let cpuBefore = SystemClock.threadCPUNanoseconds()
    var last = SystemClock.monotonicNanoseconds()
    var backwards = 0
    for _ in 0..<200_000 {
        let now = SystemClock.monotonicNanoseconds()
        if now < last { backwards += 1 }
        last = now
    }
    let cpuAfterWork = SystemClock.threadCPUNanoseconds()
    #expect(backwards == 0, "the monotonic clock never goes back")
    #expect(cpuAfterWork > cpuBefore, "200,000 clock reads take CPU time")

    let wallBeforeSleep = SystemClock.monotonicNanoseconds()
    usleep(200_000)
    let slept = SystemClock.monotonicNanoseconds() - wallBeforeSleep
    #expect(slept >= 200_000_000)
    #expect(SystemClock.threadCPUNanoseconds() - cpuAfterWork < slept / 2, "a sleeping thread uses next to no CPU")
}
