import Posix
import Testing
@testable import Server

/// Both loops are driven by hand: the test runs the source's end-of-iteration flush by calling
/// `flush`, and the target's inbox by running it for one iteration.
@Test func workPostedInOneIterationArrivesInOrderInOneBatch() throws {
    let source = try EventLoop()
    let target = try EventLoop()
    let handOff = HandOff(from: source, to: target)
    let log = Log()
    for index in 0..<5 { handOff.post { log.entries.append(index) } }
    #expect(log.entries.isEmpty, "nothing runs before the flush")
    handOff.flush()
    handOff.flush()
    target.execute { target.stop() }
    try target.run()
    #expect(log.entries == [0, 1, 2, 3, 4], "once each, in posting order")
}

/// @unchecked Sendable: written only on the thread that runs both loops.
private final class Log: @unchecked Sendable {
    var entries: [Int] = []
}
