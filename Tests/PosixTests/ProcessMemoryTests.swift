import Testing
@testable import Posix

// What the fixed threshold does to RSS is a whole-process effect, measured by the soak
// (docs/security.md); whether a given block is mapped depends on the free space the heap
// already has, which other tests running in this process decide.
@Test func theCLibraryTakesTheFixedMmapThreshold() {
    #expect(ProcessMemory.prepare())
}
