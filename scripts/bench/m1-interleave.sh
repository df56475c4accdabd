#!/usr/bin/env bash
# M1 (100 rooms x 50 members, 1 publisher per room, 512-byte chat text) for several transports and
# rates, interleaved: each round runs every MODE:RATE once, in order, so all of them see the same
# machine. On a shared VM whose speed drifts by 2x within minutes, this is the fair way to compare
# TLS or compression with plain. Prints every run, then the median per MODE:RATE with the verdict
# of the stepped scripts (every run ok, zero loss, median p99 <= SLO_MS).
#
# Usage: scripts/bench/m1-interleave.sh PLAIN_PORT TLS_PORT MODE:RATE...
#   MODE   plain, tls, deflate or tls-deflate (as in tls-lib.sh); RATE in deliveries/s
#   e.g.   ROUNDS=5 scripts/bench/m1-interleave.sh 9501 9502 plain:1499988 tls:899983 tls:800023
# Knobs: ROUNDS [3] and those of tls-lib.sh / lib.sh (DURATION, WARMUP, SIZE, TEXT, DEFLATE_OFFER,
# WSLOAD, SLO_MS, OUT_DIR, ...). The server already runs pinned: `ulimit -n 20000; taskset -c 1 ...`.
set -euo pipefail
[ $# -ge 3 ] || { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
PLAIN_PORT="$1"
TLS_PORT="$2"
shift 2
ROUNDS="${ROUNDS:-3}"
OUT_DIR="${OUT_DIR:-/tmp/bench-m1-interleave-$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$OUT_DIR"
. "$(cd "$(dirname "$0")" && pwd)/tls-lib.sh"
bench_check_port "$PLAIN_PORT"
bench_check_port "$TLS_PORT"
bench_preflight
results="$OUT_DIR/results.jsonl"
: > "$results"
for round in $(seq "$ROUNDS"); do
    for item in "$@"; do
        mode="${item%%:*}"
        tls_mode "$mode"
        port="$PLAIN_PORT"
        [ "$SCHEME" = wss ] && port="$TLS_PORT"
        read -r pubs _ <<< "$(python3 "$BENCH_DIR/wsload_table.py" pubrate "${item#*:}" deliveries 100 50)"
        json="$(bench_wsload "$OUT_DIR/wsload-$mode-${item#*:}-$round.log" \
            --url-template "$SCHEME://127.0.0.1:$port/rooms/{room}?$URL_QUERY" --rooms 100 --members 50 \
            --publishers-per-room 1 --rate "$pubs" --size "$SIZE" --duration "$DURATION" --warmup "$WARMUP" \
            --bind-range "$BIND_RANGE" --connect-timeout "$CONNECT_TIMEOUT" -q "${MODE_ARGS[@]}")"
        [ -n "$json" ] || json='{"tool":"wsload","ok":false,"missing":true}'
        printf '{"target":"%s","pub_rate":%s,"run":%s,"wsload":%s}\n' "$item" "$pubs" "$round" "$json" >> "$results"
        python3 "$BENCH_DIR/wsload_table.py" line "$results" >&2
    done
done
python3 "$BENCH_DIR/wsload_table.py" medians "$results" "$SLO_MS" "$STRICT_MS" M1-interleaved | tee "$OUT_DIR/table.txt"
