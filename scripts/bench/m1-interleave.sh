#!/usr/bin/env bash
# M1 (100 rooms x 50 members, 1 publisher per room, 512-byte chat text) for several transports and
# rates, interleaved: each round runs every MODE:RATE once, in order, so all of them see the same
# machine. On a shared VM whose speed drifts by 2x within minutes, this is the fair way to compare
# TLS or compression with plain. Prints every run, then the median per MODE:RATE with its verdict
# (zero loss and median p99 <= SLO_MS).
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
        rate="${item#*:}"
        tls_mode "$mode"
        port="$PLAIN_PORT"
        [ "$SCHEME" = wss ] && port="$TLS_PORT"
        pubs=$(( (rate + 49 / 2) / 49 ))
        json="$(bench_wsload "$OUT_DIR/wsload-$mode-$rate-$round.log" \
            --url-template "$SCHEME://127.0.0.1:$port/rooms/{room}?$URL_QUERY" --rooms 100 --members 50 \
            --publishers-per-room 1 --rate "$pubs" --size "$SIZE" --duration "$DURATION" --warmup "$WARMUP" \
            --bind-range "$BIND_RANGE" --connect-timeout "$CONNECT_TIMEOUT" -q "${MODE_ARGS[@]}")"
        [ -n "$json" ] || json='{}'
        echo "{\"item\":\"$item\",\"round\":$round,\"wsload\":$json}" >> "$results"
        python3 - "$item" "$round" "$json" <<'PY'
import json, sys
item, run, j = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
if not j:
    print(f"{item:>20} round {run}: no result (see the log)")
else:
    print(f"{item:>20} round {run}: delivered/s {j['delivered_per_s']:>10.0f} p50 {j['latency_us']['p50']/1000:8.1f} ms"
          f" p99 {j['latency_us']['p99']/1000:8.1f} ms lost {j['lost']} client cpu {j['client_cpu_pct']:.0f}%", flush=True)
PY
    done
done
python3 - "$results" "$SLO_MS" <<'PY'
import json, statistics, sys
runs, slo = {}, float(sys.argv[2])
for line in open(sys.argv[1]):
    r = json.loads(line)
    runs.setdefault(r["item"], []).append(r["wsload"])
print(f"M1 interleaved: median of runs per MODE:RATE (p99 bound {slo:.0f} ms)")
print(f"{'MODE:RATE':>20} {'runs':>4} {'delivered/s':>12} {'p50 ms':>8} {'p99 ms':>8} {'lost':>6}  verdict")
for item, js in runs.items():
    ok = [j for j in js if j]
    if not ok:
        print(f"{item:>20} {len(js):>4}  no results"); continue
    p99 = statistics.median(j["latency_us"]["p99"] / 1000 for j in ok)
    lost = sum(j["lost"] for j in ok)
    verdict = "sustained" if lost == 0 and len(ok) == len(js) and p99 <= slo else "FAIL"
    print(f"{item:>20} {len(js):>4} {statistics.median(j['delivered_per_s'] for j in ok):>12.0f}"
          f" {statistics.median(j['latency_us']['p50'] / 1000 for j in ok):>8.1f} {p99:>8.1f} {lost:>6}  {verdict}")
PY
