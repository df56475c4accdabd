#!/usr/bin/env bash
# Durable sends through the cluster's Redis Stream journal next to the single node's own journal
# and to redis-benchmark RPUSH, each with fsync on every write, in one window (BENCHMARKS.md,
# "Cluster mode"; docs/cluster.md, "One history"):
#
#   scripts/bench/cluster-durable.sh [SENDERS...]     (default 8 64)
#
# For every sender count and run: a fresh redis-server (appendonly yes, appendfsync always) on
# REDIS_CPU [SERVER_CPU] and a fresh cluster node on it on SERVER_CPU [1], and wsload durable on
# LOAD_CPU [0] (two cores: Redis shares a core with the node or with the load) (scripts/bench/run chat-durable with SERVER_ARGS=--redis). Then
# the single node alone (chat-durable) and redis-server alone under redis-benchmark -t rpush
# -d 64 with as many clients (redis-rpush). Knobs as scripts/bench/run's (BIN, RUNS, DURATION,
# WARMUP, DATA_ROOT, ...); results under OUT_DIR [/tmp/bench-cluster-durable-TIME].
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=scripts/bench/lib.sh
. "$here/lib.sh"
OUT_DIR="${OUT_DIR:-/tmp/bench-cluster-durable-$(date +%Y%m%d-%H%M%S)}"
[ $# -gt 0 ] || set -- 8 64
command -v redis-server > /dev/null && command -v redis-benchmark > /dev/null \
    || { echo "cluster-durable: needs redis-server and redis-benchmark (apt-get install redis-server redis-tools)" >&2; exit 2; }
mkdir -p "$OUT_DIR"
redis_pid=""
redis_dir=""
stop_redis() {
    [ -n "$redis_pid" ] || return 0
    kill "$redis_pid" 2> /dev/null || true
    wait "$redis_pid" 2> /dev/null || true
    rm -rf "$redis_dir"
    redis_pid=""
}
trap stop_redis EXIT

for senders in "$@"; do
    for run in $(seq "$RUNS"); do
        redis_dir="$(mktemp -d "$DATA_ROOT/bench-cluster-redis.XXXXXX")"
        port="$(free_port)"
        taskset -c "${REDIS_CPU:-$SERVER_CPU}" redis-server --port "$port" --bind 127.0.0.1 --dir "$redis_dir" --appendonly yes \
            --appendfsync always --save '' > "$OUT_DIR/redis.log" 2>&1 &
        redis_pid=$!
        until redis-cli -p "$port" ping > /dev/null 2>&1; do sleep 0.05; done
        SERVER_ARGS="--redis redis://127.0.0.1:$port" RUNS=1 OUT_DIR="$OUT_DIR/cluster-$senders-$run" \
            "$here/run" chat-durable "$senders" > /dev/null 2>&1
        cat "$OUT_DIR/cluster-$senders-$run/durable-$senders.jsonl" >> "$OUT_DIR/cluster-$senders.jsonl"
        stop_redis
    done
done
echo "# through Redis (node on core $SERVER_CPU, redis-server on core ${REDIS_CPU:-$SERVER_CPU}):" >&2
for senders in "$@"; do
    median "$OUT_DIR/cluster-$senders.jsonl" acked_per_s ack_latency_us.p50 ack_latency_us.p99 \
        server_us_per_ack >&2
done
echo "# the single node's own journal:" >&2
RUNS="$RUNS" OUT_DIR="$OUT_DIR/single" "$here/run" chat-durable "$@" 2> /dev/null | grep '"runs"' >&2
echo "# redis-benchmark RPUSH, appendfsync always:" >&2
RUNS="$RUNS" OUT_DIR="$OUT_DIR/rpush" "$here/run" redis-rpush "$@" 2> /dev/null | grep '"runs"' >&2
