#!/usr/bin/env bash
# M1 with every room's members split over two cluster nodes on one redis-server, next to M1 on
# one node, in one window (BENCHMARKS.md, "Cluster mode"; docs/cluster.md):
#
#   scripts/bench/cluster.sh RATES...        (target deliveries/s, as scripts/bench/run m1)
#
# Redis and both nodes share SERVER_CPU [1] (two cores leave one for the load), wsload runs on
# LOAD_CPU [0]. Odd members of each room connect to the second node (wsload --split-port), so a
# publisher on the first node has 24 receivers there and 25 on the other. Then the same rates
# against a single node on SERVER_CPU alone (scripts/bench/run m1). Knobs as scripts/bench/run's
# (BIN, RUNS, DURATION, WARMUP, RATE_UNIT, ...); results under OUT_DIR [/tmp/bench-cluster-TIME].
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=scripts/bench/lib.sh
. "$here/lib.sh"
OUT_DIR="${OUT_DIR:-/tmp/bench-cluster-$(date +%Y%m%d-%H%M%S)}"
[ $# -ge 1 ] || { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
[ -x "$BIN" ] || { echo "cluster: no server binary at $BIN (swift build -c release --static-swift-stdlib --product switchboard)" >&2; exit 2; }
command -v redis-server > /dev/null || { echo "cluster: needs redis-server (Debian redis-server)" >&2; exit 2; }
mkdir -p "$OUT_DIR"
work="$(mktemp -d /tmp/bench-cluster-data.XXXXXX)"
pids=()
cleanup() {
    local pid
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2> /dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2> /dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

redis_port="$(free_port)"
taskset -c "$SERVER_CPU" redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" \
    > "$OUT_DIR/redis.log" 2>&1 &
pids+=($!)
until redis-cli -p "$redis_port" ping > /dev/null 2>&1; do sleep 0.05; done

# Two nodes with the abuse limits a load generator trips by design lifted (BENCH_LIMITS).
ports=()
for node in a b; do
    env "${BENCH_LIMITS[@]}" SWITCHBOARD_NODE_ID="bench-$node" \
        taskset -c "$SERVER_CPU" "$BIN" serve --host 127.0.0.1 --port 0 --data "$work/$node" \
        --redis "redis://127.0.0.1:$redis_port" --log-level error > "$OUT_DIR/node-$node.log" 2>&1 &
    pids+=($!)
    port=""
    until [ -n "$port" ]; do
        sleep 0.05
        port="$(sed -n 's|^listening on ws://[0-9.]*:\([0-9]*\).*|\1|p' "$OUT_DIR/node-$node.log" | head -1)"
    done
    until [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz" || true)" = 200 ]; do sleep 0.05; done
    ports+=("$port")
done
node_a_pid="${pids[1]}"

echo "cluster: two nodes (ports ${ports[*]}) and redis-server on core $SERVER_CPU" >&2
PORT="${ports[0]}" SERVER_PID="$node_a_pid" SPLIT_PORT="${ports[1]}" OUT_DIR="$OUT_DIR/cluster" \
    "$here/run" m1 "$@"
cleanup
pids=()
echo "cluster: one node on core $SERVER_CPU" >&2
OUT_DIR="$OUT_DIR/single" "$here/run" m1 "$@"
