#!/bin/bash
# Recovery: time from exec to /readyz 200 and memory, on a data folder made by make-store.py.
#
# Usage: scripts/bench/recovery.sh [STORE_DIR]   (default: $DATA_ROOT/chatload-store-1m; made with
#        make-store.py's defaults, 1,000 groups, 1,000,000 snapshot messages + 100,000 journal
#        lines, when it does not exist). A folder in the first layout (tree.json) is converted by
#        the first start of each run, so to time a start on segments, pass a folder a server has
#        already converted (one with manifest.json).
# Environment: RUNS (3), and those of chat-common.sh (BIN, DATA_ROOT=/tmp, SERVER_CPU=1).
# Each run copies the pristine folder (the server may rewrite it), starts the server pinned to
# SERVER_CPU, polls GET /readyz every 10 ms until 200, then reads VmHWM (peak resident) and
# VmRSS from /proc/PID/status, and the server's CPU seconds so far (utime + stime).
# Prints one JSON line per run, then the medians.
source "$(dirname "$0")/chat-common.sh"
RUNS="${RUNS:-3}"
STORE="${1:-$DATA_ROOT/chatload-store-1m}"
if [ ! -f "$STORE/tree.json" ] && [ ! -f "$STORE/manifest.json" ]; then
    python3 "$ROOT/scripts/bench/make-store.py" "$STORE" >&2
fi
OUT="$(mktemp -d "${TMPDIR:-/tmp}/recovery.XXXX")"
echo "# $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg) store=$STORE bytes=$(du -sb "$STORE" | cut -f1)" >&2
for run in $(seq 1 "$RUNS"); do
    dir="$DATA_ROOT/recovery-$$-$run"
    rm -rf "$dir"
    cp -r "$STORE" "$dir"
    rm -f "$dir/lock" "$dir/secret"
    sync
    t0=$(date +%s%N)
    SERVER_LOG_LEVEL=info start_server "$dir"
    ready=""
    for _ in $(seq 1 6000); do
        code="$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$SERVER_PORT/readyz" || true)"
        if [ "$code" = "200" ]; then ready=$(date +%s%N); break; fi
        sleep 0.01
    done
    # CPU seconds the server used up to ready (all threads): what the wall time would be on an
    # idle core, since the files are in the page cache after the copy.
    ticks=$(awk '{print $14 + $15}' "/proc/$SERVER_PID/stat")
    cpu_s=$(python3 -c "import os; print(round($ticks / os.sysconf('SC_CLK_TCK'), 2))")
    hwm=$(awk '/VmHWM/ {print $2}' "/proc/$SERVER_PID/status")
    rss=$(awk '/VmRSS/ {print $2}' "/proc/$SERVER_PID/status")
    loaded="$(grep -o 'chat state loaded: [^"]*' "$dir.log" | head -1)"
    storelog="$(grep -o 'store loaded: [0-9]* journal lines in [0-9]* ms' "$dir.log" | head -1)"
    stop_server
    if [ -z "$ready" ]; then echo "run $run: not ready within 60 s" >&2; ready_s=null; else
        ready_s=$(python3 -c "print(round(($ready - $t0) / 1e9, 3))"); fi
    echo "{\"run\":$run,\"ready_s\":$ready_s,\"cpu_s\":$cpu_s,\"vmhwm_mib\":$((hwm / 1024)),\"vmrss_mib\":$((rss / 1024)),\"log\":\"$storelog; $loaded\"}" \
        | tee -a "$OUT/recovery.jsonl"
    rm -rf "$dir" "$dir.log"
done
median "$OUT/recovery.jsonl" ready_s cpu_s vmhwm_mib vmrss_mib
