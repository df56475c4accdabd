import Glibc

/// Folders: the static files' walk through the public folder at start-up.
extension FileSystem {
    /// The canonical absolute path of `path` (symlinks resolved), or nil when it does not exist.
    public static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The regular files below `root`, as paths relative to it (`css/app.css`), sorted.
    ///
    /// A symbolic link is followed only when its target lies inside `root` too: a link that
    /// leads out of the folder is left out, with its relative path in `outside`, so a link can
    /// never publish a file elsewhere on the machine. Folders are descended at most `depth`
    /// levels, which also ends a loop of links inside the folder. Returns nil when `root` is
    /// not a folder.
    public static func files(
        under root: String, depth: Int = 8
    ) -> (files: [String], outside: [String])? {
        guard let base = realPath(root), isDirectory(base) else { return nil }
        var files: [String] = []
        var outside: [String] = []
        var folders: [(relative: String, level: Int)] = [("", 0)]
        while let (folder, level) = folders.popLast() {
            for name in entries(of: base + "/" + folder) {
                let relative = folder + name
                guard let target = realPath(base + "/" + relative) else { continue }
                guard target.hasPrefix(base + "/") else {
                    outside.append(relative)
                    continue
                }
                if isDirectory(target) {
                    if level < depth { folders.append((relative + "/", level + 1)) }
                } else if isRegularFile(target) {
                    files.append(relative)
                }
            }
        }
        return (files.sorted(), outside.sorted())
    }

    /// The names in a folder, without `.` and `..`.
    private static func entries(of folder: String) -> [String] {
        guard let stream = opendir(folder) else { return [] }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    private static func isDirectory(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
    }

    private static func isRegularFile(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFREG
    }
}
