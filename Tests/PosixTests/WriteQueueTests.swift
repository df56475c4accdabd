import Bytes
import Glibc
import Testing
@testable import Posix

/// A connected pair of non-blocking Unix stream sockets.
private func socketPair() -> (Int32, Int32) {
    var fds: [Int32] = [0, 0]
    let result = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue), 0, &fds)
    precondition(result == 0)
    return (fds[0], fds[1])
}

private func drain(_ fd: Int32) -> [UInt8] {
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        if count <= 0 { return received }
        received += buffer[0..<count]
    }
}

@Test func flushWritesEveryChunkInOrder() throws {
    let (writer, reader) = socketPair()
    defer { close(writer); close(reader) }
    let vectors = UnsafeMutableBufferPointer<iovec>.allocate(capacity: 4)
    defer { vectors.deallocate() }
    var queue = WriteQueue()
    for index in 0..<10 { queue.append(ByteChunk([UInt8](repeating: UInt8(index), count: index + 1))) }
    #expect(queue.queuedBytes == 55)
    let drained = try queue.flush(to: writer, vectors: vectors)
    #expect(drained)
    #expect(queue.isEmpty && queue.queuedBytes == 0)
    let expected = (0..<10).flatMap { [UInt8](repeating: UInt8($0), count: $0 + 1) }
    #expect(drain(reader) == expected)
}

@Test func fullSocketKeepsTheRestAndResumesMidChunk() throws {
    let (writer, reader) = socketPair()
    defer { close(writer); close(reader) }
    var size: Int32 = 4096
    setsockopt(writer, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    let vectors = UnsafeMutableBufferPointer<iovec>.allocate(capacity: 8)
    defer { vectors.deallocate() }
    var queue = WriteQueue()
    let chunk = ByteChunk((0..<100_000).map { UInt8(truncatingIfNeeded: $0 * 7) })
    queue.append(chunk)
    queue.append(chunk)
    var received: [UInt8] = []
    var drained = try queue.flush(to: writer, vectors: vectors)
    #expect(!drained, "a 200 KB write cannot fit a 4 KB socket buffer")
    #expect(queue.queuedBytes > 0 && queue.queuedBytes < 200_000)
    while !drained {
        received += drain(reader)
        drained = try queue.flush(to: writer, vectors: vectors)
    }
    received += drain(reader)
    #expect(received == chunk.array + chunk.array)
}

@Test func flushToAClosedPeerThrowsNamingTheCall() {
    let (writer, reader) = socketPair()
    close(reader)
    defer { close(writer) }
    signal(SIGPIPE, SIG_IGN)
    let vectors = UnsafeMutableBufferPointer<iovec>.allocate(capacity: 1)
    defer { vectors.deallocate() }
    var queue = WriteQueue()
    queue.append(ByteChunk([1, 2, 3] as [UInt8]))
    #expect(throws: PosixError.self) { _ = try queue.flush(to: writer, vectors: vectors) }
}

@Test func aSingleChunkGoesOutWithSendAndResumesMidChunk() throws {
    let (writer, reader) = socketPair()
    defer { close(writer); close(reader) }
    var size: Int32 = 4096
    setsockopt(writer, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    let vectors = UnsafeMutableBufferPointer<iovec>.allocate(capacity: 8)
    defer { vectors.deallocate() }
    var queue = WriteQueue()
    let chunk = ByteChunk((0..<100_000).map { UInt8(truncatingIfNeeded: $0 * 13) })
    queue.append(chunk)
    var received: [UInt8] = []
    var drained = try queue.flush(to: writer, vectors: vectors)
    #expect(!drained)
    while !drained {
        received += drain(reader)
        drained = try queue.flush(to: writer, vectors: vectors)
    }
    received += drain(reader)
    #expect(received == chunk.array)
    #expect(queue.isEmpty && queue.queuedBytes == 0)
}
