#ifndef C_FUZZER_H
#define C_FUZZER_H

#include <stddef.h>
#include <stdint.h>

/// One input for the fuzz target; returns 0 (libFuzzer reserves other values).
typedef int (*CFuzzer_Body)(const uint8_t *data, size_t size);

/// Runs libFuzzer's driver over `body` with the command line's arguments and returns its status.
int CFuzzer_run(int argc, char **argv, CFuzzer_Body body);

#endif
