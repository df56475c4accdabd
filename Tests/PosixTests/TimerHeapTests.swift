import Testing
@testable import Posix

@Test func timersComeOutInDeadlineOrderAndOnlyWhenDue() {
    var heap = TimerHeap()
    var fired: [UInt64] = []
    for (id, deadline) in [(1, 50), (2, 10), (3, 30), (4, 20), (5, 40)] as [(UInt64, UInt64)] {
        heap.insert(.init(deadline: deadline, id: id, body: {}))
    }
    #expect(heap.nextDeadline == 10)
    while let timer = heap.popDue(now: 35) { fired.append(timer.id) }
    #expect(fired == [2, 4, 3])
    #expect(heap.nextDeadline == 40)
}

@Test func cancelledTimersNeverFire() {
    var heap = TimerHeap()
    heap.insert(.init(deadline: 1, id: 1, body: {}))
    heap.insert(.init(deadline: 2, id: 2, body: {}))
    heap.cancel(1)
    var fired: [UInt64] = []
    while let timer = heap.popDue(now: 10) { fired.append(timer.id) }
    #expect(fired == [2])
}

@Test func eventLoopRunsWorkFromOtherThreadsAndStops() throws {
    let loop = try EventLoop()
    let thread = Thread { loop.execute { loop.stop() } }
    thread.start()
    try loop.run()
}

import Foundation
