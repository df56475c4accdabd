/// A group's messages in memory as a run of arrays (chunks) of at most `chunkCapacity` each,
/// indexed from 0 like one array.
///
/// After a checkpoint the oldest messages leave memory while up to a million newer ones stay.
/// With one flat array, dropping them copied every message that stayed (a retain of each of
/// its strings): 60 to 100 ms on the event loop per checkpoint under load. Here the chunks
/// that leave are moved out whole and only the chunk the cut falls in is copied, so the cost
/// depends on the number of chunks, not of messages.
///
/// Chunks start small and grow as arrays do, so the many small groups cost what their
/// messages need. No chunk is empty. Positions are found from each chunk's end: directly
/// while every chunk between the first and the last is full, as appends keep them, and by
/// binary search over the ends after an insertion split one.
public struct MessageChunks: Sendable {
    /// Messages per full chunk: dropping copies at most this many. A full chunk's array (96
    /// bytes a message) stays under glibc's 128 KiB threshold, so it comes from the heap
    /// rather than from an mmap of its own.
    static let defaultChunkCapacity = 1024

    let chunkCapacity: Int
    private(set) var chunks: [[ChatMessage]] = []
    /// Per chunk, the position just past its last message: `ends.last` is the count.
    private var ends: [Int] = []

    /// `messages` in chunks; the first takes the remainder so that the others are full.
    ///
    /// The messages are moved from `messages` into the chunks, not copied: a copy would retain
    /// every string of a million messages at start-up and then release them with the array.
    init(_ messages: consuming [ChatMessage] = [], chunkCapacity: Int = MessageChunks.defaultChunkCapacity) {
        precondition(chunkCapacity > 0, "a chunk holds at least one message")
        self.chunkCapacity = chunkCapacity
        var rest = consume messages
        if rest.isEmpty { return }
        if rest.count <= chunkCapacity {
            ends = [rest.count]
            chunks = [rest]
            return
        }
        // From the end, so that each `removeLast` moves a message out without shifting the rest.
        var newestFirst: [[ChatMessage]] = []
        newestFirst.reserveCapacity((rest.count + chunkCapacity - 1) / chunkCapacity)
        while !rest.isEmpty {
            let size = Swift.min(chunkCapacity, rest.count)
            var chunk: [ChatMessage] = []
            chunk.reserveCapacity(size)
            for _ in 0..<size { chunk.append(rest.removeLast()) }
            chunk.reverse()
            newestFirst.append(chunk)
        }
        newestFirst.reverse()
        chunks = newestFirst
        var end = 0
        ends = chunks.map { chunk in
            end += chunk.count
            return end
        }
    }

    public var count: Int { ends.last ?? 0 }
    public var isEmpty: Bool { chunks.isEmpty }
    public var first: ChatMessage? { chunks.first?.first }
    public var last: ChatMessage? { chunks.last?.last }
    /// The last message's id, without copying the message.
    public var lastID: String? {
        guard let chunk = chunks.indices.last else { return nil }
        return chunks[chunk][chunks[chunk].count - 1].id
    }

    /// Appends `message` to the last chunk, or starts a new one when that is full.
    mutating func append(_ message: consuming ChatMessage) {
        if let last = chunks.indices.last, chunks[last].count < chunkCapacity {
            chunks[last].append(message)
            ends[last] += 1
        } else {
            ends.append(count + 1)
            chunks.append([message])
        }
    }

    /// Inserts `message` at `position` (at most `count`). Rare (a message whose id sorts before
    /// the newest), so a chunk it overfills is simply split in two halves.
    mutating func insert(_ message: consuming ChatMessage, at position: Int) {
        precondition(position >= 0 && position <= count, "MessageChunks insertion position out of range")
        if position == count {
            append(message)
            return
        }
        let (chunk, offset) = locate(position)
        chunks[chunk].insert(message, at: offset)
        if chunks[chunk].count > chunkCapacity {
            let half = chunks[chunk].count / 2
            let upper = Array(chunks[chunk][half...])
            chunks[chunk].removeSubrange(half...)
            chunks.insert(upper, at: chunk + 1)
        }
        recomputeEnds(from: chunk)
    }

    /// Removes the message at `position`. Rare (a message another node took back, docs/cluster.md);
    /// a chunk left empty goes.
    mutating func remove(at position: Int) {
        let (chunk, offset) = locate(position)
        chunks[chunk].remove(at: offset)
        if chunks[chunk].isEmpty { chunks.remove(at: chunk) }
        recomputeEnds(from: chunk)
    }

    /// Removes the first `k` messages (at most `count`) and returns them.
    ///
    /// The chunks that leave whole are moved out; of the chunk the cut falls in, the messages
    /// that stay are copied into a new first chunk, and the old array goes out with the
    /// removed ones, so the caller can free it all elsewhere.
    mutating func removePrefix(_ k: Int) -> Removed {
        precondition(k >= 0 && k <= count, "MessageChunks cannot remove more messages than it holds")
        guard k > 0 else { return Removed() }
        let (whole, cut) = k == count ? (chunks.count, 0) : locate(k)
        var removed = Removed()
        removed.slices.reserveCapacity(whole + 1)
        for chunk in chunks[..<whole] { removed.slices.append(chunk[...]) }
        chunks.removeFirst(whole)
        ends.removeFirst(whole)
        if cut > 0 {
            let split = chunks[0]
            removed.slices.append(split[..<cut])
            chunks[0] = Array(split[cut...])
        }
        for index in ends.indices { ends[index] -= k }
        removed.count = k
        return removed
    }

    /// The chunk holding `position` and the position within it.
    private func locate(_ position: Int) -> (chunk: Int, offset: Int) {
        precondition(position >= 0 && position < count, "MessageChunks index out of range")
        let first = ends[0]
        if position < first { return (0, position) }
        let guess = 1 + (position - first) / chunkCapacity
        if guess < ends.count && ends[guess - 1] <= position && position < ends[guess] {
            return (guess, position - ends[guess - 1])
        }
        // A chunk between the first and the last is not full: search the ends.
        var low = 1
        var high = ends.count - 1
        while low < high {
            let middle = (low + high) / 2
            if ends[middle] <= position { low = middle + 1 } else { high = middle }
        }
        return (low, position - ends[low - 1])
    }

    /// Sets `ends` from chunk `start` on, after the chunks there changed.
    private mutating func recomputeEnds(from start: Int) {
        ends.removeSubrange(start...)
        var end = start > 0 ? ends[start - 1] : 0
        for chunk in chunks[start...] {
            end += chunk.count
            ends.append(end)
        }
    }
}

extension MessageChunks: RandomAccessCollection, MutableCollection {
    public typealias Index = Int
    public typealias Indices = Range<Int>

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    // Read and modify in place: a receipt changes one message's `receivedBy`, which a copy of
    // the message would make the dictionary copy whole.
    public subscript(position: Int) -> ChatMessage {
        _read {
            let (chunk, offset) = locate(position)
            yield chunks[chunk][offset]
        }
        _modify {
            let (chunk, offset) = locate(position)
            yield &chunks[chunk][offset]
        }
    }

    public func makeIterator() -> Iterator {
        Iterator(chunks: chunks)
    }

    /// Walks the chunks in order, without finding each position again.
    public struct Iterator: IteratorProtocol {
        private let chunks: [[ChatMessage]]
        private var chunk = 0
        private var offset = 0

        fileprivate init(chunks: [[ChatMessage]]) {
            self.chunks = chunks
        }

        public mutating func next() -> ChatMessage? {
            guard chunk < chunks.count else { return nil }
            defer {
                offset += 1
                if offset == chunks[chunk].count {
                    chunk += 1
                    offset = 0
                }
            }
            return chunks[chunk][offset]
        }
    }
}

extension MessageChunks: Equatable {
    /// The same messages in the same order, however they are split into chunks.
    public static func == (lhs: MessageChunks, rhs: MessageChunks) -> Bool {
        lhs.count == rhs.count && lhs.elementsEqual(rhs)
    }
}

extension MessageChunks {
    /// Messages `removePrefix` took, in order, still in the arrays that held them.
    ///
    /// The last array may also hold the first messages that stayed (their originals, copied
    /// into the new first chunk), which is why the slices, not the arrays, say what was removed.
    struct Removed: Sequence, Sendable {
        /// The removed part of each array: whole chunks, then the cut one's beginning.
        fileprivate(set) var slices: [ArraySlice<ChatMessage>] = []
        /// How many messages were removed.
        fileprivate(set) var count = 0

        var isEmpty: Bool { count == 0 }
        var underestimatedCount: Int { count }

        func makeIterator() -> FlattenSequence<[ArraySlice<ChatMessage>]>.Iterator {
            slices.joined().makeIterator()
        }
    }
}
