#!/bin/sh
# Build chatload (single C file, libc only): ./build.sh [OUTPUT]   (default: chatload beside this file)
set -e
src="$(cd "$(dirname "$0")" && pwd)/chatload.c"
out="${1:-$(dirname "$src")/chatload}"
${CC:-gcc} -O2 -g -Wall -Wextra -pthread -o "$out" "$src"
echo "built $out"
