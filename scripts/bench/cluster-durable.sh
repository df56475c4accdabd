#!/usr/bin/env bash
# Durable sends through the cluster's Redis Stream journal next to the single node's own journal
# and to redis-benchmark RPUSH, each with fsync on every write, in one window (BENCHMARKS.md,
# "Cluster mode"; docs/cluster.md, "One history"):
#
#   scripts/bench/cluster-durable.sh [SENDERS...]     (default 8 64)
#
# RUNS rounds per sender count; each round runs the three sides one after the other, in an order
# that turns with the round (the VM's speed drifts within minutes, so a side measured in a block
# of its own runs in another window): a fresh redis-server (appendonly yes, appendfsync always)
# on REDIS_CPU [SERVER_CPU] with a fresh cluster node on it on SERVER_CPU [1] and wsload durable
# on LOAD_CPU [0] (two cores: Redis shares a core with the node or with the load; scripts/bench/run
# chat-durable with SERVER_ARGS=--redis), the single node alone (chat-durable), and redis-server
# alone under redis-benchmark -t rpush -d 64 with as many clients (redis-rpush). Prints each
# side's medians (with the event loop's and redis-server's CPU per ack split into user and
# system time), the ratio of the medians and each round's ratio. Knobs as scripts/bench/run's
# (BIN, RUNS, DURATION, WARMUP, DATA_ROOT, ...); results under OUT_DIR
# [/tmp/bench-cluster-durable-TIME].
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

# cluster_run SENDERS ROUND: one run through a fresh redis-server and a fresh node on it.
cluster_run() {
    local senders="$1" round="$2" port
    redis_dir="$(mktemp -d "$DATA_ROOT/bench-cluster-redis.XXXXXX")"
    port="$(free_port)"
    taskset -c "${REDIS_CPU:-$SERVER_CPU}" redis-server --port "$port" --bind 127.0.0.1 --dir "$redis_dir" --appendonly yes \
        --appendfsync always --save '' > "$OUT_DIR/redis.log" 2>&1 &
    redis_pid=$!
    until redis-cli -p "$port" ping > /dev/null 2>&1; do sleep 0.05; done
    SERVER_ARGS="--redis redis://127.0.0.1:$port" ALSO_PIDS="$redis_pid" RUNS=1 OUT_DIR="$OUT_DIR/cluster-$senders-$round" \
        "$here/run" chat-durable "$senders" > /dev/null 2>&1
    grep "^{" "$OUT_DIR/cluster-$senders-$round/durable-$senders.jsonl" >> "$OUT_DIR/cluster-$senders.jsonl"
    stop_redis
}

# single_run / rpush_run SENDERS ROUND: the single node's own journal, and RPUSH.
single_run() {
    RUNS=1 OUT_DIR="$OUT_DIR/single-$1-$2" "$here/run" chat-durable "$1" > /dev/null 2>&1
    grep '^{' "$OUT_DIR/single-$1-$2/durable-$1.jsonl" >> "$OUT_DIR/single-$1.jsonl"
}

rpush_run() {
    RUNS=1 OUT_DIR="$OUT_DIR/rpush-$1-$2" "$here/run" redis-rpush "$1" > /dev/null 2>&1
    grep '^{' "$OUT_DIR/rpush-$1-$2/redis-$1.jsonl" >> "$OUT_DIR/rpush-$1.jsonl"
}

for senders in "$@"; do
    for round in $(seq "$RUNS"); do
        case $((round % 3)) in
            1) cluster_run "$senders" "$round"; rpush_run "$senders" "$round"; single_run "$senders" "$round" ;;
            2) rpush_run "$senders" "$round"; single_run "$senders" "$round"; cluster_run "$senders" "$round" ;;
            0) single_run "$senders" "$round"; cluster_run "$senders" "$round"; rpush_run "$senders" "$round" ;;
        esac
    done
done
loop="$(loop_thread)"
for senders in "$@"; do
    echo "# $senders senders, $RUNS rounds; through Redis (node on core $SERVER_CPU, redis-server on core ${REDIS_CPU:-$SERVER_CPU}):" >&2
    median "$OUT_DIR/cluster-$senders.jsonl" acked_per_s ack_latency_us.p50 ack_latency_us.p99 server_us_per_ack \
        "server_threads.$loop.user_us_per_op" "server_threads.$loop.sys_us_per_op" \
        server_threads.redis-server.user_us_per_op server_threads.redis-server.sys_us_per_op >&2
    echo "# the single node's own journal:" >&2
    median "$OUT_DIR/single-$senders.jsonl" acked_per_s ack_latency_us.p99 server_us_per_ack \
        "server_threads.$loop.user_us_per_op" "server_threads.$loop.sys_us_per_op" >&2
    echo "# redis-benchmark RPUSH, appendfsync always:" >&2
    median "$OUT_DIR/rpush-$senders.jsonl" rps p99_ms server_us_per_req server_user_us_per_req server_sys_us_per_req >&2
    python3 - "$OUT_DIR/cluster-$senders.jsonl" "$OUT_DIR/rpush-$senders.jsonl" >&2 << 'PY'
import json, statistics, sys
ours = [json.loads(l)["acked_per_s"] for l in open(sys.argv[1]) if l.startswith("{")]
rpush = [json.loads(l)["rps"] for l in open(sys.argv[2]) if l.startswith("{")]
rounds = ", ".join(f"{100 * a / b:.0f}" for a, b in zip(ours, rpush))
print(f"# through Redis {statistics.median(ours):,.0f} acked/s, RPUSH {statistics.median(rpush):,.0f}/s: "
      f"{100 * statistics.median(ours) / statistics.median(rpush):.0f}% (rounds: {rounds})")
PY
done
