#!/usr/bin/env bash
# M2: memory per idle connection. Reads the server's VmRSS, opens 10,000 idle WebSocket
# connections spread over 100 rooms (wsload --idle 10000 --hold 10 --rooms 100), reads VmRSS again
# once all are open, and prints the per-connection cost. RUNS runs (default 3), median reported.
# The cost is measured from the baseline read before the first run: after a run the allocator keeps
# (and the next run reuses) the freed memory, so a later run's own before/after delta understates it.
# Start from a freshly started server for the first-run figure to mean anything.
#
# Usage: scripts/bench/m2.sh PID PORT
#   PID   the server process (its /proc/PID/status is read; its open-file limit is raised to the
#         hard limit with prlimit when lower than the connection count, since 10,000 sockets need it)
#   PORT  its plain /rooms/{room} listener on 127.0.0.1
# Environment: IDLE [10000], HOLD [10], ROOMS [100], RUNS [3], WSLOAD, CLIENT_CORE [0], OUT_DIR,
#              URL_QUERY [notices=0], SETTLE [2] (seconds after READY before reading VmRSS).
set -euo pipefail
[ $# -eq 2 ] || { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
PID="$1"
PORT="$2"
OUT_DIR="${OUT_DIR:-/tmp/bench-m2-$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$OUT_DIR"
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
IDLE="${IDLE:-10000}"
HOLD="${HOLD:-10}"
ROOMS="${ROOMS:-100}"
SETTLE="${SETTLE:-2}"
[ -r "/proc/$PID/status" ] || { echo "m2: no process $PID" >&2; exit 2; }
bench_check_port "$PORT"
bench_preflight

rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$PID/status"; }

# The server needs a descriptor per connection plus its own; raise its soft limit if it is short.
soft="$(prlimit --pid "$PID" --nofile --output SOFT --noheadings | tr -d ' ')"
if [ "$soft" != "unlimited" ] && [ "$soft" -lt $((IDLE + 100)) ]; then
    hard="$(prlimit --pid "$PID" --nofile --output HARD --noheadings | tr -d ' ')"
    echo "m2: raising the server's open-file limit from $soft to $hard" >&2
    prlimit --pid "$PID" --nofile="$hard:$hard"
fi

url="ws://127.0.0.1:$PORT/rooms/{room}?$URL_QUERY"
results="$OUT_DIR/m2.txt"
: > "$results"
baseline="$(rss_kib)"
for run in $(seq "$RUNS"); do
    before="$(rss_kib)"
    log="$OUT_DIR/wsload-idle-$run.log"
    # In the background so VmRSS can be read while the connections are held open.
    timeout $((HOLD + 120)) taskset -c "$CLIENT_CORE" "$WSLOAD" --url-template "$url" --idle "$IDLE" \
        --hold "$HOLD" --rooms "$ROOMS" > "$OUT_DIR/wsload-idle-$run.json" 2> "$log" &
    wpid=$!
    ready=""
    for _ in $(seq 600); do
        if grep -q "READY" "$log"; then ready=1; break; fi
        kill -0 "$wpid" 2> /dev/null || break
        sleep 0.1
    done
    if [ -z "$ready" ]; then
        wait "$wpid" || true
        echo "m2: run $run: wsload never reported READY; its output:" >&2
        tail -5 "$log" >&2
        exit 1
    fi
    sleep "$SETTLE"
    after="$(rss_kib)"
    established="$(sed -n 's/.*READY established=\([0-9]*\).*/\1/p' "$log" | head -1)"
    wait "$wpid" || true
    python3 - "$run" "$baseline" "$before" "$after" "${established:-0}" <<'PY' | tee -a "$results"
import sys
run, (baseline, before, after, n) = sys.argv[1], map(int, sys.argv[2:6])
per = (after - baseline) / n if n else float("nan")
own = (after - before) / n if n else float("nan")
print(f"run {run}: established {n}  VmRSS baseline {baseline} KiB  before {before} KiB  after {after} KiB  "
      f"per connection {per:.2f} KiB (from this run's own before: {own:.2f} KiB)")
PY
    [ "${established:-0}" -eq "$IDLE" ] || echo "m2: run $run: only ${established:-0} of $IDLE connections opened" >&2
    sleep 2
done
python3 - "$results" <<'PY'
import re, statistics, sys
per = [float(m.group(1)) for m in re.finditer(r"per connection ([0-9.-]+) KiB", open(sys.argv[1]).read())]
print(f"M2 per idle connection: median {statistics.median(per):.2f} KiB over {len(per)} runs "
      f"(first run {per[0]:.2f} KiB)" if per else "M2: no result")
PY
