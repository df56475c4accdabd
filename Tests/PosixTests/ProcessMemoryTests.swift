import CLinux
import Glibc
import Testing
@testable import Posix

/// Whether glibc mapped `block` on its own: bit 1 (IS_MMAPPED) of the chunk's size word, which
/// sits just before the pointer malloc returned.
private func isMapped(_ block: UnsafeMutableRawPointer) -> Bool {
    block.load(fromByteOffset: -MemoryLayout<Int>.size, as: Int.self) & 2 != 0
}

@Test func largeBlocksStayMappedAfterALargerOneIsFreed() throws {
    #expect(ProcessMemory.prepare())
    // Unfixed, freeing a mapped 1 MiB block raises glibc's threshold to 1 MiB, and the next
    // 256 KiB block would come from the heap and stay resident after its free.
    let large = try #require(malloc(1 << 20))
    #expect(isMapped(large))
    free(large)
    let next = try #require(malloc(Int(ProcessMemory.mappedBlockBytes) * 2))
    #expect(isMapped(next))
    free(next)
}
