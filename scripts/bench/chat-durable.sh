#!/bin/bash
# Durable sends on /ws: acked sends/s and ack latency with fsync on, 8 and 64 senders.
#
# Usage: scripts/bench/chat-durable.sh [SENDERS...]   (default: 8 64)
# Environment: RUNS (3), DURATION (10), WARMUP (2), WINDOW (1), DURABILITY (fsync), STORE (none),
# and those of chat-common.sh (BIN, DATA_ROOT=/tmp, SERVER_CPU=1, LOAD_CPU=0).
# Each run starts a fresh server on an empty data folder in DATA_ROOT (a copy of STORE when set,
# e.g. a folder of make-store.py that a server has converted), pinned to SERVER_CPU; the
# load (Benchmarks/chatload durable) runs on LOAD_CPU. Prints each run's JSON line, then the
# medians per sender count.
source "$(dirname "$0")/chat-common.sh"
RUNS="${RUNS:-3}"; DURATION="${DURATION:-10}"; WARMUP="${WARMUP:-2}"; WINDOW="${WINDOW:-1}"
DURABILITY="${DURABILITY:-fsync}"
SENDERS=("$@"); [ ${#SENDERS[@]} -gt 0 ] || SENDERS=(8 64)
OUT="$(mktemp -d "${TMPDIR:-/tmp}/chat-durable.XXXX")"
echo "# $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg) durability=$DURABILITY data=$DATA_ROOT window=$WINDOW" >&2
for n in "${SENDERS[@]}"; do
    for run in $(seq 1 "$RUNS"); do
        dir="$DATA_ROOT/chat-durable-$$-$n-$run"
        rm -rf "$dir"
        if [ -n "${STORE:-}" ]; then cp -r "$STORE" "$dir"; rm -f "$dir/lock"; fi
        start_server "$dir" --durability "$DURABILITY"
        with_server_cpu timeout 120 taskset -c "$LOAD_CPU" "$CHATLOAD" durable --url "ws://127.0.0.1:$SERVER_PORT/ws" --conns "$n" \
            --window "$WINDOW" --duration "$DURATION" --warmup "$WARMUP" -q | tee -a "$OUT/durable-$n.jsonl"
        stop_server
        rm -rf "$dir" "$dir.log"
    done
    echo "# median of $RUNS runs, $n senders:" >&2
    median "$OUT/durable-$n.jsonl" acked_per_s ack_latency_us.p50 ack_latency_us.p99 ack_latency_us.max client_cpu_pct server_cpu_pct_run
done
echo "# raw lines in $OUT" >&2
