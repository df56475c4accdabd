/// An immutable run of bytes on the heap, shared by reference.
///
/// Fan-out encodes a frame once and queues the same chunk on every member socket; the chunk's
/// storage never moves, so the write queue can hand its address straight to `writev` without
/// copying or pinning an `Array`. Immutable after `init`, so sharing it across threads is safe.
public final class ByteChunk: @unchecked Sendable {
    /// The bytes; valid for the chunk's lifetime.
    public let bytes: UnsafeRawBufferPointer

    public var count: Int { bytes.count }

    /// Allocates `count` bytes and lets `fill` write them exactly once.
    public init(count: Int, fill: (UnsafeMutableRawBufferPointer) -> Void) {
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
        let used = UnsafeMutableRawBufferPointer(rebasing: storage[0..<count])
        fill(used)
        self.bytes = UnsafeRawBufferPointer(used)
    }

    /// Takes ownership of `storage` (allocated with `UnsafeMutableRawBufferPointer.allocate`),
    /// of which the first `count` bytes are the chunk: bytes produced in place, such as TLS
    /// records, become a chunk without a copy.
    public init(adopting storage: UnsafeMutableRawBufferPointer, count: Int) {
        precondition(count <= storage.count, "a chunk cannot be longer than its storage")
        self.bytes = UnsafeRawBufferPointer(rebasing: storage[0..<count])
    }

    /// Copies an array with one `memcpy`. The generic initializer below cannot be specialised
    /// across the module boundary and would copy byte by byte; TLS output takes this path for
    /// every flush, so it matters.
    public convenience init(_ source: [UInt8]) {
        self.init(count: source.count) { target in
            source.withUnsafeBytes { target.copyMemory(from: $0) }
        }
    }

    public convenience init(_ source: some Collection<UInt8>) {
        self.init(count: source.count) { target in
            _ = target.initializeMemory(as: UInt8.self, from: source)
        }
    }

    public convenience init(_ source: UnsafeRawBufferPointer) {
        self.init(count: source.count) { target in
            target.copyMemory(from: source)
        }
    }

    deinit {
        UnsafeMutableRawPointer(mutating: bytes.baseAddress!).deallocate()
    }

    public var array: [UInt8] { Array(bytes) }
}

extension ByteChunk: CustomStringConvertible {
    public var description: String { "ByteChunk(\(count) bytes)" }
}
