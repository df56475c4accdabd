import Bytes
import CLinux
import Glibc

/// The outbound bytes of one socket: a queue of shared chunks, flushed with `writev`.
///
/// Chunks are queued by reference: a room message encoded once sits in every member's queue
/// without a copy. `queuedBytes` is what the slow-consumer limit is checked against.
/// Confined to the event loop thread that owns the socket.
public struct WriteQueue {
    private var chunks: [ByteChunk] = []
    /// Index of the first chunk not yet fully written; chunks before it are dropped lazily so
    /// that popping the head is O(1).
    private var head = 0
    /// Bytes of `chunks[head]` already written (a partial write stops mid-chunk).
    private var headOffset = 0
    public private(set) var queuedBytes = 0

    public init() {}

    public var isEmpty: Bool { head == chunks.count }

    public mutating func append(_ chunk: ByteChunk) {
        chunks.append(chunk)
        queuedBytes += chunk.count
    }

    /// Drops everything queued (the socket is being closed).
    public mutating func removeAll() {
        chunks = []
        head = 0
        headOffset = 0
        queuedBytes = 0
    }

    /// Writes as much as the socket takes, `vectors.count` chunks per `writev` (one chunk alone
    /// with `send`).
    ///
    /// Returns true when the queue is empty afterwards, false when the socket is full (the
    /// loop's next writable edge continues).
    public mutating func flush(to fd: Int32, vectors: UnsafeMutableBufferPointer<iovec>) throws(PosixError) -> Bool {
        while head < chunks.count {
            var count = 0
            var index = head
            while index < chunks.count && count < vectors.count {
                let bytes = chunks[index].bytes
                let skip = index == head ? headOffset : 0
                vectors[count] = iovec(
                    iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress! + skip),
                    iov_len: bytes.count - skip)
                count += 1
                index += 1
            }
            let sent = count == 1
                ? try Socket.send(fd, UnsafeRawBufferPointer(start: vectors[0].iov_base, count: vectors[0].iov_len))
                : try Socket.writev(fd, vectors.baseAddress!, count: Int32(count))
            guard let written = sent else { return false }
            consume(written)
        }
        chunks.removeAll(keepingCapacity: chunks.capacity <= 16)
        head = 0
        headOffset = 0
        return true
    }

    private mutating func consume(_ written: Int) {
        queuedBytes -= written
        var remaining = written
        while remaining > 0 {
            let available = chunks[head].count - headOffset
            if remaining >= available {
                remaining -= available
                head += 1
                headOffset = 0
            } else {
                headOffset += remaining
                remaining = 0
            }
        }
        // Drop written chunks once they are the larger part, so memory follows the backlog.
        if head > 64 && head * 2 > chunks.count {
            chunks.removeFirst(head)
            head = 0
        }
    }
}
