#!/usr/bin/env bash
# M3 over wss:// and/or permessage-deflate: 1 room of 2,000 members, 1 publisher, 512-byte
# chat-like text, `?notices=0`, open-loop rate stepped up (RUNS runs per rate, medians in the table) until
# the first rate that loses a message or whose median p99 exceeds 250 ms. Uses wsload-tls.
#
# Usage: scripts/bench/m3-tls.sh MODE PORT [RATES...]
#   MODE   plain (ws://), tls (wss://), deflate (ws:// + permessage-deflate), tls-deflate
#   PORT   the server's plain port for plain/deflate, its TLS port for tls/tls-deflate; the server
#          already runs pinned: `ulimit -n 20000; taskset -c 1 SERVER ...`
#   RATES  target deliveries/s (default: 500 1000 2000 5000 10000 20000 50000 100000 150000 ...)
# See tls-lib.sh and lib.sh for the knobs (SIZE [512], TEXT [chat], DURATION, RUNS, WSLOAD, ...).
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
MODE="$1"
PORT="$2"
shift 2
OUT_DIR="${OUT_DIR:-/tmp/bench-m3-$MODE-$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$OUT_DIR"
. "$(cd "$(dirname "$0")" && pwd)/tls-lib.sh"
tls_mode "$MODE"
bench_check_port "$PORT"
bench_preflight
tls_bench_step M3 "$MODE" "$PORT" "${ROOMS:-1}" "${MEMBERS:-2000}" "$@"
