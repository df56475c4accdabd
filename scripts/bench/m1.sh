#!/usr/bin/env bash
# M1: fan-out throughput. 100 rooms x 50 members, 1 publisher per room, 64-byte messages,
# `?notices=0`, open-loop rate stepped up (RUNS runs per rate, medians in the table) until the first
# rate that loses a message or whose median p99 exceeds 250 ms.
#
# Usage: scripts/bench/m1.sh PORT [RATES...]
#   PORT   a server implementing /rooms/{room} on 127.0.0.1 (Switchboard or the Hummingbird peer),
#          already running pinned: `ulimit -n 20000; taskset -c 1 SERVER ...`
#   RATES  target deliveries/s (default: 500 1000 2000 5000 10000 20000 40000 80000 ...);
#          RATE_UNIT=publishes makes them wsload --rate values instead. See lib.sh for all knobs.
# Prints the table plus the sustained (p99 <= 250 ms, zero loss) and strict (p99 <= 50 ms) rates.
set -euo pipefail
[ $# -ge 1 ] || { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
PORT="$1"
shift
OUT_DIR="${OUT_DIR:-/tmp/bench-m1-$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$OUT_DIR"
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
bench_check_port "$PORT"
bench_preflight
bench_step M1 "$PORT" "${ROOMS:-100}" "${MEMBERS:-50}" "$@"
