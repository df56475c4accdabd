#!/bin/sh
# Build wsload (C, libc + OpenSSL for wss:// + zlib for permessage-deflate):
#   ./build.sh [OUTPUT]   (default: wsload beside this file)
set -e
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/wsload}"
${CC:-gcc} -O2 -g -Wall -Wextra -pthread -o "$out" "$here/main.c" "$here/client.c" "$here/tls.c" "$here/deflate.c" \
    "$here/relay.c" "$here/chat.c" "$here/selftest.c" -lssl -lcrypto -lz
echo "built $out"
