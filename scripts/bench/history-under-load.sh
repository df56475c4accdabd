#!/bin/bash
# Deep-history paging while durable senders load the server, on a copy of a stored folder.
#
# Usage: STORE=DIR scripts/bench/history-under-load.sh [SENDERS]   (default 64)
# Environment: STORE (required: a make-store.py folder, best one a server has converted already),
# DURATION (60), DEEP (1000: the oldest messages per group that pages come from; a tenth of a
# group of the 10,000,000-message store), and those of chat-common.sh (BIN, DATA_ROOT=/tmp,
# SERVER_CPU=1, LOAD_CPU=0).
# Copies STORE, starts the server on it pinned to SERVER_CPU and reads its start (time to ready,
# resident memory); then runs, together on LOAD_CPU, `chatload durable` with SENDERS connections
# for DURATION s and history-paging.py for DURATION - 10 s, sampling the server's VmRSS every
# second. Prints the chatload line, the paging line, and one line of memory and checkpoints.
source "$(dirname "$0")/chat-common.sh"
: "${STORE:?set STORE to a data folder}"
DURATION="${DURATION:-60}"; DEEP="${DEEP:-1000}"
SENDERS="${1:-64}"
OUT="$(mktemp -d "${TMPDIR:-/tmp}/history-under-load.XXXX")"
dir="$DATA_ROOT/history-under-load-$$"
rm -rf "$dir"; cp -r "$STORE" "$dir"; rm -f "$dir/lock"; sync
echo "# $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg) store=$STORE bytes=$(du -sb "$STORE" | cut -f1) senders=$SENDERS" >&2
t0=$(date +%s%N)
SERVER_LOG_LEVEL=info start_server "$dir"
until [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$SERVER_PORT/readyz" || true)" = "200" ]; do sleep 0.01; done
ready_s=$(python3 -c "print(round(($(date +%s%N) - $t0) / 1e9, 3))")
start_rss=$(awk '/VmRSS/ {print int($2 / 1024)}' "/proc/$SERVER_PID/status")
( while kill -0 "$SERVER_PID" 2>/dev/null; do awk '/VmRSS/ {print int($2 / 1024)}' "/proc/$SERVER_PID/status" 2>/dev/null; sleep 1; done ) > "$OUT/rss" &
sampler=$!
taskset -c "$LOAD_CPU" python3 "$ROOT/scripts/bench/history-paging.py" --url "ws://127.0.0.1:$SERVER_PORT/ws" \
    --deep "$DEEP" --duration "$((DURATION - 10))" > "$OUT/paging.json" &
pager=$!
with_server_cpu timeout $((DURATION + 60)) taskset -c "$LOAD_CPU" "$CHATLOAD" durable --url "ws://127.0.0.1:$SERVER_PORT/ws" \
    --conns "$SENDERS" --duration "$DURATION" --warmup 2 -q | tee "$OUT/durable.json"
wait "$pager" || true
cat "$OUT/paging.json"
hwm=$(awk '/VmHWM/ {print int($2 / 1024)}' "/proc/$SERVER_PID/status")
# The journal's own flush times: the part of an acknowledgement's wait that is the disk's.
curl -s "http://127.0.0.1:$SERVER_PORT/metrics" | grep '^switchboard_store_flush_seconds_bucket' >&2 || true
stop_server
kill "$sampler" 2>/dev/null || true
checkpoints=$(grep -c "\] checkpoint " "$dir.log" || true)
echo "{\"ready_s\":$ready_s,\"rss_after_start_mib\":$start_rss,\"rss_max_under_load_mib\":$(sort -n "$OUT/rss" | tail -1),\"vmhwm_mib\":$hwm,\"checkpoints\":$checkpoints}"
grep "\] checkpoint " "$dir.log" | sed 's/.*\] //' >&2 || true
rm -rf "$dir" "$dir.log"
