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

    /// Freed blocks glibc keeps per thread for each block size (its default is 7).
    ///
    /// The event loop allocates in bursts: 64 durable senders' requests are parsed in one
    /// iteration (ten small blocks each) and freed together once their batch is acknowledged.
    /// Beyond 7 blocks a size, the blocks go back to the arena's bins and come out of them
    /// again at a higher cost: malloc's bin handling was 9% of the server's CPU at 64 senders.
    /// With 256 the bursts stay in the thread's cache: 7% more acknowledged sends a second
    /// for 7% less CPU each (BENCHMARKS.md). At most 8 MiB stay cached per thread, if every size
    /// fills its 256; in practice a few of them do.
    public static let cachedBlocksPerSize = 256

    /// The `GLIBC_TUNABLES` value that asks for `cachedBlocksPerSize`, after `current`'s, or
    /// nil when `current` already sets the count (the operator's choice stands).
    public static func tunables(after current: String?) -> String? {
        guard current?.contains("glibc.malloc.tcache_count") != true else { return nil }
        let setting = "glibc.malloc.tcache_count=\(cachedBlocksPerSize)"
        guard let current, !current.isEmpty else { return setting }
        return current + ":" + setting
    }

    /// Starts the program again, once, with `tunables(after:)` in its environment: glibc reads
    /// tunables only from the environment a process starts with. Call it first thing, before
    /// any thread or descriptor exists. Returns without restarting when the environment
    /// already sets the count, and when the restart fails (no `/proc`): the program then runs
    /// on the C library's default cache.
    ///
    /// The binary is started by its own path, which `/proc/self/exe` names, rather than through
    /// that link: the process's name (`ps`, `top`, `pkill switchboard`) is the file's.
    public static func restartWithThreadCache() {
        guard let value = tunables(after: getenv("GLIBC_TUNABLES").map { String(cString: $0) }),
              let path = executablePath()
        else { return }
        setenv("GLIBC_TUNABLES", value, 1)
        execv(path, CommandLine.unsafeArgv)
    }

    /// The running binary's path, from `/proc/self/exe`.
    private static func executablePath() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
