import Testing
@testable import Posix

// What the fixed threshold does to RSS is a whole-process effect, measured by the soak
// (docs/security.md); whether a given block is mapped depends on the free space the heap
// already has, which other tests running in this process decide.
@Test func theCLibraryTakesTheFixedMmapThreshold() {
    #expect(ProcessMemory.prepare())
}

@Test func theThreadCacheIsAskedForUnlessTheEnvironmentSetsIt() {
    #expect(ProcessMemory.tunables(after: nil) == "glibc.malloc.tcache_count=256")
    #expect(ProcessMemory.tunables(after: "") == "glibc.malloc.tcache_count=256")
    #expect(ProcessMemory.tunables(after: "glibc.malloc.arena_max=2") == "glibc.malloc.arena_max=2:glibc.malloc.tcache_count=256")
    #expect(ProcessMemory.tunables(after: "glibc.malloc.tcache_count=7") == nil)
    #expect(ProcessMemory.tunables(after: "glibc.malloc.arena_max=2:glibc.malloc.tcache_count=64") == nil)
}
