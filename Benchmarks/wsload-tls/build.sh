#!/bin/sh
# Build wsload-tls (single C file; OpenSSL for wss://, zlib for permessage-deflate):
#   ./build.sh [OUTPUT]   (default: wsload-tls beside this file)
set -e
src="$(cd "$(dirname "$0")" && pwd)/wsload-tls.c"
out="${1:-$(dirname "$src")/wsload-tls}"
${CC:-gcc} -O2 -g -Wall -Wextra -pthread -o "$out" "$src" -lssl -lcrypto -lz
echo "built $out"
