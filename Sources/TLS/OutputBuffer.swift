import Bytes

/// The ciphertext OpenSSL produced for one session and the socket has not taken yet.
///
/// One heap block that grows in place of an `Array` and is handed to the write queue as a
/// `ByteChunk` without copying: the records are written once, by OpenSSL, into the memory the
/// socket writes from. Empty between flushes, so an idle session holds nothing.
struct OutputBuffer: ~Copyable {
    private var storage: UnsafeMutableRawBufferPointer?
    private(set) var count = 0

    init() {}

    deinit {
        storage?.deallocate()
    }

    var isEmpty: Bool { count == 0 }

    /// Makes room for `additional` more bytes: exactly that much when empty (a flush reserves
    /// its whole plaintext plus record framing up front), doubling otherwise.
    mutating func reserve(_ additional: Int) {
        let capacity = storage?.count ?? 0
        let needed = count + additional
        guard needed > capacity else { return }
        let grown = UnsafeMutableRawBufferPointer.allocate(
            byteCount: count == 0 ? needed : max(needed, capacity * 2), alignment: 16)
        if let storage {
            grown.copyMemory(from: UnsafeRawBufferPointer(rebasing: storage[0..<count]))
            storage.deallocate()
        }
        storage = grown
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        reserve(bytes.count)
        UnsafeMutableRawBufferPointer(rebasing: storage![count...]).copyMemory(from: bytes)
        count += bytes.count
    }

    /// Lets `body` write at most `capacity` bytes straight after the contents (records sealed
    /// in place); `body` returns how many it wrote.
    mutating func append(
        upTo capacity: Int, _ body: (UnsafeMutableRawPointer) throws(TLSError) -> Int
    ) throws(TLSError) {
        guard capacity > 0 else { return }
        reserve(capacity)
        let written = try body(storage!.baseAddress! + count)
        precondition(written <= capacity, "wrote past the reserved output")
        count += written
    }

    /// Hands the bytes over as a chunk that owns them, leaving the buffer empty; nil when empty.
    mutating func take() -> ByteChunk? {
        guard let storage, count > 0 else { return nil }
        let chunk = ByteChunk(adopting: storage, count: count)
        self.storage = nil
        count = 0
        return chunk
    }
}
