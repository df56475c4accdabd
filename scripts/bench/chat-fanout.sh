#!/bin/bash
# Fan-out through /ws in M1's shape: G groups x M subscribed connections, one sender per group,
# open-loop total rate stepped until the first failing rate (loss, any error, or p99 > P99_MS),
# then RUNS runs at the last passing and the first failing rate, with medians.
#
# Usage: scripts/bench/chat-fanout.sh
# Environment: RATES ("500 1000 2000 5000 10000 20000 50000"), FANOUT_GROUPS (100), MEMBERS (50),
# RUNS (3), DURATION (10), WARMUP (2), P99_MS (250), DURABILITY (fsync), and those of
# chat-common.sh (BIN, DATA_ROOT=/tmp, SERVER_CPU=1, LOAD_CPU=0).
# Each run starts a fresh server on an empty data folder (sends are durable, so every message is
# journalled and fsynced before its event goes out).
source "$(dirname "$0")/chat-common.sh"
RATES="${RATES:-500 1000 2000 5000 10000 20000 50000}"
GROUPS_N="${FANOUT_GROUPS:-100}"; MEMBERS="${MEMBERS:-50}"; RUNS="${RUNS:-3}"
DURATION="${DURATION:-10}"; WARMUP="${WARMUP:-2}"; P99_MS="${P99_MS:-250}"; DURABILITY="${DURABILITY:-fsync}"
OUT="$(mktemp -d "${TMPDIR:-/tmp}/chat-fanout.XXXX")"
ulimit -n 65536 2>/dev/null || true
echo "# $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg) ${GROUPS_N}x${MEMBERS} durability=$DURABILITY data=$DATA_ROOT" >&2

# run RATE: one run at RATE; appends its JSON line to $OUT/fanout-RATE.jsonl; succeeds if it passed.
run() {
    local rate="$1" dir="$DATA_ROOT/chat-fanout-$$-$1" line
    rm -rf "$dir"
    start_server "$dir" --durability "$DURABILITY"
    line="$(with_server_cpu timeout 300 taskset -c "$LOAD_CPU" "$CHATLOAD" fanout --url "ws://127.0.0.1:$SERVER_PORT/ws" \
        --groups "$GROUPS_N" --members "$MEMBERS" --rate "$rate" --duration "$DURATION" --warmup "$WARMUP" \
        --slo-p99-ms "$P99_MS" -q)"
    stop_server
    rm -rf "$dir" "$dir.log"
    echo "$line" | tee -a "$OUT/fanout-$rate.jsonl"
    echo "$line" | grep -q '"ok":true,"slo_ok":true,'
}

last_pass=""; first_fail=""
for rate in $RATES; do
    if run "$rate"; then last_pass="$rate"; else first_fail="$rate"; break; fi
done
echo "# last passing rate: ${last_pass:-none}; first failing rate: ${first_fail:-none}" >&2
for rate in $last_pass $first_fail; do
    for _ in $(seq 2 "$RUNS"); do run "$rate" >/dev/null || true; done
    echo "# median of $RUNS runs at $rate sends/s:" >&2
    median "$OUT/fanout-$rate.jsonl" delivered_per_s latency_us.p50 latency_us.p99 latency_us.max lost \
        ack_latency_us.p50 ack_latency_us.p99 send_lag_us.p99 client_cpu_pct server_cpu_pct_run
done
echo "# raw lines in $OUT" >&2
