import CLinux
import Glibc

/// Process-wide allocator set-up, done first thing in `main` before any thread starts.
public enum ProcessMemory {
    /// Blocks of this many bytes or more are mapped on their own and unmapped when freed
    /// (glibc's own default threshold, but fixed).
    public static let mappedBlockBytes: Int32 = 128 * 1024

    /// Fixes glibc's mmap threshold. Left alone, glibc raises it to the size of every large
    /// block freed (up to 32 MiB), after which message buffers of up to a megabyte come from
    /// the heap and stay resident once freed: under the soak's floods of large frames and zip
    /// bombs the server's RSS swung by 5.8% with nothing growing. Fixed, a large buffer the heap
    /// has no free room for is mapped and goes back to the system when freed, and RSS follows
    /// what is in use (2.4%). Large buffers are rare on the per-message path (reads go into the
    /// loop's one buffer), so the extra `mmap`s cost nothing measurable. False when the C
    /// library refuses the setting.
    @discardableResult
    public static func prepare() -> Bool {
        mallopt(M_MMAP_THRESHOLD, mappedBlockBytes) == 1
    }
}
