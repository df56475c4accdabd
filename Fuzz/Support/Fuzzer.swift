import CFuzzer

#if canImport(Glibc)
import Glibc
#endif

/// Starts libFuzzer on a Swift closure.
///
/// Each target's `main.swift` calls `Fuzzer.run { input in ... }`. The closure checks its
/// invariants with `precondition`: a failed one traps, and libFuzzer saves the input as a crash.
/// libFuzzer calls the closure from the main thread only, one input at a time.
public enum Fuzzer {
    /// The target's body; set once before the driver starts, read only by `callBody`.
    nonisolated(unsafe) private static var body: (UnsafeRawBufferPointer) -> Void = { _ in }

    /// Runs libFuzzer with the process's arguments (corpus folders, `-max_total_time=`, ...)
    /// and exits with its status: 0 when the time or run count is used up without a finding.
    public static func run(_ body: @escaping (UnsafeRawBufferPointer) -> Void) -> Never {
        Self.body = body
        exit(CFuzzer_run(CommandLine.argc, CommandLine.unsafeArgv, callBody))
    }

    private static let callBody: CFuzzer_Body = { data, size in
        Fuzzer.body(UnsafeRawBufferPointer(start: data, count: size))
        return 0
    }
}
