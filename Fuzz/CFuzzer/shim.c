#include "CFuzzer.h"

// libFuzzer (linked by -sanitize=fuzzer) brings a `main` that needs LLVMFuzzerTestOneInput. On
// Linux SwiftPM links every executable with `--defsym main=<module>_main`, so that `main` never
// runs: the target's own top-level code calls CFuzzer_run, which starts libFuzzer's driver
// (LLVMFuzzerRunDriver, part of the same library) on the body the Swift side registered.

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

static CFuzzer_Body registeredBody;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return registeredBody(data, size);
}

int CFuzzer_run(int argc, char **argv, CFuzzer_Body body) {
    registeredBody = body;
    return LLVMFuzzerRunDriver(&argc, &argv, LLVMFuzzerTestOneInput);
}
