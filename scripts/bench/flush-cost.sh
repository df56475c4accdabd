#!/usr/bin/env bash
# What one flush costs the server under M1 load: runs one wsload-tls M1 run (100 rooms x 50
# members, 512-byte chat text) and, once the connections are up, samples the server for 3 s:
# loop iterations (epoll_wait calls), flushes (writev calls) and CPU time. Prints the server's
# CPU share, iterations/s and the loop period T, writev/s and CPU per writev (the cost of one
# flush, the `a + n·b` of BENCHMARKS.md), then deliveries/s and latency from the run.
#
# Usage: scripts/bench/flush-cost.sh SERVER_PID URL PUBLISHES_PER_S [WSLOAD-TLS OPTIONS...]
#   e.g. scripts/bench/flush-cost.sh "$(pgrep -f 'switchboard --host')" \
#            'wss://127.0.0.1:9502/rooms/{room}?notices=0' 10204
# Needs perf (syscall tracepoints). Knobs: WSLOAD, CLIENT_CORE [0], SETTLE [11] seconds before
# sampling (connections and warm-up; TLS connects take about 7 s for 5,000).
set -euo pipefail
[ $# -ge 3 ] || { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
pid="$1" url="$2" rate="$3"
shift 3
here="$(cd "$(dirname "$0")" && pwd)"
wsload="${WSLOAD:-$here/../../Benchmarks/wsload-tls/wsload-tls}"
work="$(mktemp -d /tmp/flush-cost.XXXXXX)"
trap 'rm -rf "$work"' EXIT
taskset -c "${CLIENT_CORE:-0}" "$wsload" --url-template "$url" --rooms 100 --members 50 --publishers-per-room 1 \
    --rate "$rate" --size 512 --duration 12 --warmup 2 --bind-range 4 --connect-timeout 60 -q --text chat "$@" \
    > "$work/run.json" 2> "$work/run.err" &
load=$!
sleep "${SETTLE:-11}"
cpu_before=$(awk '{print $14 + $15}' "/proc/$pid/stat")
perf stat -x, -e 'syscalls:sys_enter_epoll_wait,syscalls:sys_enter_writev' -p "$pid" -- sleep 3 2> "$work/stat"
cpu_after=$(awk '{print $14 + $15}' "/proc/$pid/stat")
wait "$load" || true
python3 - "$work" "$cpu_before" "$cpu_after" "$(getconf CLK_TCK)" <<'PY'
import json, sys
work, before, after, ticks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
counts = {}
for line in open(f"{work}/stat"):
    fields = line.strip().split(",")
    if len(fields) > 3 and fields[0].isdigit():
        counts[fields[2].split(":")[-1]] = int(fields[0]) / 3
cpu = (after - before) / ticks / 3
iterations = counts.get("sys_enter_epoll_wait", 0)
writevs = counts.get("sys_enter_writev", 0)
try:
    run = json.load(open(f"{work}/run.json"))
except ValueError:
    sys.exit(f"flush-cost: the wsload-tls run failed: {open(work + '/run.err').read()[-400:]}")
latency = run["latency_us"]
print(f"server cpu {cpu * 100:4.0f}%  iterations/s {iterations:7.0f}  T {1000 / iterations if iterations else 0:6.1f} ms"
      f"  writev/s {writevs:7.0f}  cpu per writev {cpu * 1e6 / writevs if writevs else 0:6.2f} us"
      f" | delivered/s {run['delivered_per_s']:8.0f}  lost {run['lost']}  p50 {latency['p50'] / 1000:6.1f} ms"
      f"  p99 {latency['p99'] / 1000:6.1f} ms  client cpu {run['client_cpu_pct']:.0f}%")
PY
