import Posix

/// Work one loop hands to another, gathered over a loop iteration and passed on in one batch.
///
/// Each loop keeps one `HandOff` per other loop. Work posted during an iteration (room messages
/// for that loop's members, chat events for its connections, joins for the chat loop) is
/// appended here; at the end of the iteration, with the socket flushes, the whole batch goes to
/// the other loop through one `EventLoop.execute`: one mutex and at most one eventfd write per
/// pair of loops per iteration, however many messages it carries. The other loop runs the batch
/// in order, so what one loop posts to another arrives in the order it was posted: a publisher's
/// messages keep their order, and the chat loop's events reach every loop in its one order.
///
/// Confined to the loop that posts; only `flush` crosses to the other loop, through its inbox.
final class HandOff: Flushable {
    private let target: EventLoop
    private let source: EventLoop
    private var work: [() -> Void] = []

    init(from source: EventLoop, to target: EventLoop) {
        self.source = source
        self.target = target
    }

    /// Queues `body` to run on the other loop after everything posted before it.
    func post(_ body: @escaping () -> Void) {
        if work.isEmpty { source.flushLater(self) }
        work.append(body)
    }

    func flush() {
        guard !work.isEmpty else { return }
        let batch = Batch(work)
        work = []
        target.execute { batch.run() }
    }

    /// One iteration's work for the other loop.
    ///
    /// @unchecked Sendable: it is made on the posting loop and run only on the target loop;
    /// what its closures capture belongs to the target loop or never changes (frames are
    /// immutable `ByteChunk`s, payloads are copied-on-write arrays nobody writes).
    private final class Batch: @unchecked Sendable {
        private let work: [() -> Void]

        init(_ work: [() -> Void]) {
            self.work = work
        }

        func run() {
            for body in work { body() }
        }
    }
}
