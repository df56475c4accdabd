import Glibc

/// Small whole-file reads for static assets and configuration, at start-up only.
public enum FileSystem {
    /// The file's bytes, or nil when it cannot be opened or read.
    public static func readFile(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { return result }
            result.append(contentsOf: chunk[0..<count])
        }
    }
}
