#!/usr/bin/env bash
# User-space instructions per acknowledged durable send, counted by callgrind: a figure the
# VM's run-to-run speed does not move, for A/B of changes too small for the timed benchmarks'
# noise (BENCHMARKS.md, "Instructions per acknowledged send"):
#
#   scripts/bench/instructions.sh BIN [BIN...]
#
# For each build, two runs of `wsload durable` (SENDERS [64], window 1) against a fresh server
# under `valgrind --tool=callgrind`, pinned to SERVER_CPU [1] so it runs one loop as the timed
# benchmarks do: SHORT [3] and LONG [15] seconds. The difference of the two runs' instructions
# divided by the difference of their acknowledged sends leaves out the start and the setup.
# Prints, per build, the loop thread's instructions per ack and the whole process's, and with
# TOP=N the N functions with the most instructions of their own per ack on the loop thread.
# Kernel work (the system calls) is not counted: `scripts/bench/run durable-vs-redis` measures
# time. The compactor's checkpoints are counted apart: after the long run's load the server is
# left to finish them, and the instructions inside them (its thread's `runCheckpoint`) divided by
# the records they wrote to segments are printed as `compactor instr/record` (set
# SWITCHBOARD_COMPACT_AFTER_BYTES, e.g. 2000000, so that the slow run reaches checkpoints).
# With CLUSTER=1 each run's server is a cluster node on a fresh redis-server of its own
# (appendonly yes, appendfsync always, on SERVER_CPU), and the load starts once the node is ready.
# Needs valgrind (apt-get install valgrind), and redis-server for CLUSTER=1. Results under OUT_DIR
# [/tmp/bench-instructions-TIME].
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=scripts/bench/lib.sh
. "$here/lib.sh"
OUT_DIR="${OUT_DIR:-/tmp/bench-instructions-$(date +%Y%m%d-%H%M%S)}"
[ $# -gt 0 ] || { awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"; exit 2; }
command -v valgrind > /dev/null && command -v callgrind_annotate > /dev/null \
    || { echo "instructions: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
bench_preflight
SENDERS="${SENDERS:-64}"
SHORT="${SHORT:-3}"
LONG="${LONG:-15}"

if [ -n "${CLUSTER:-}" ]; then
    command -v redis-server > /dev/null || { echo "instructions: CLUSTER=1 needs redis-server (apt-get install redis-server)" >&2; exit 2; }
fi
redis_pid=""
# lib.sh's own exit trap (server_stop) first, then the run's redis-server.
trap 'server_stop; [ -z "$redis_pid" ] || kill "$redis_pid" 2> /dev/null || true' EXIT

# One run: leaves the profiles in $dir and "acks loop_instructions all_instructions loop_profile"
# in $dir/count.
count_run() {
    local bin="$1" dir="$2" seconds="$3" port i config=() cluster=() redis_port
    [ -n "$SB_CONFIG" ] && [ -f "$SB_CONFIG" ] && config=(--config "$SB_CONFIG")
    # A fresh folder: a build named twice would start on the data of its earlier run.
    rm -rf "$dir"
    mkdir -p "$dir"
    if [ -n "${CLUSTER:-}" ]; then
        redis_port="$(free_port)"
        mkdir -p "$dir/redis"
        taskset -c "$SERVER_CPU" redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$dir/redis" --appendonly yes \
            --appendfsync always --save '' > "$dir/redis.log" 2>&1 &
        redis_pid=$!
        until redis-cli -p "$redis_port" ping > /dev/null 2>&1; do sleep 0.05; done
        cluster=(--redis "redis://127.0.0.1:$redis_port")
    fi
    # As server_start starts it, under callgrind; the server re-executes itself once (glibc's
    # thread cache), and valgrind follows it.
    (cd "$dir" && exec env "${BENCH_LIMITS[@]}" taskset -c "$SERVER_CPU" \
        valgrind --tool=callgrind --trace-children=yes --separate-threads=yes --callgrind-out-file="$dir/callgrind.out" \
        "$bin" serve "${config[@]}" --host 127.0.0.1 --port 0 --tls-port 0 --data "$dir/data" --log-level error "${cluster[@]}" \
        > "$dir/server.log" 2>&1) &
    local pid=$!
    for i in $(seq 600); do
        port="$(sed -n 's|^listening on ws://[0-9.]*:\([0-9]*\).*|\1|p' "$dir/server.log" | head -1)"
        [ -n "$port" ] && break
        kill -0 "$pid" 2> /dev/null || { echo "instructions: the server exited:" >&2; cat "$dir/server.log" >&2; exit 1; }
        sleep 0.1
    done
    [ -n "$port" ] || { echo "instructions: the server did not start within 60 s" >&2; kill "$pid"; exit 1; }
    # A cluster node takes changes once it has read the journal to its end.
    if [ -n "${CLUSTER:-}" ]; then
        for i in $(seq 3000); do
            [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz" || true)" = 200 ] && break
            sleep 0.1
        done
    fi
    # A server under callgrind runs tens of times slower: the set-up's signup (a password hash)
    # may take minutes on a busy machine, the last acks seconds (--connect-timeout and --drain
    # wait up to 300 and 60 s, and no longer than they take).
    timeout $((seconds + 1000)) taskset -c "$LOAD_CPU" "$WSLOAD" durable --url "ws://127.0.0.1:$port/ws" --conns "$SENDERS" \
        --window 1 --duration "$seconds" --warmup 1 --connect-timeout 300 --drain 60 -q > "$dir/wsload.json" \
        || { echo "instructions: the load run failed: $(cat "$dir/wsload.json")" >&2; kill "$pid"; exit 1; }
    # Checkpoints still running finish first (a rotated journal is deleted when its checkpoint is done).
    for i in $(seq 600); do
        compgen -G "$dir/data/journal.[0-9]*.jsonl" > /dev/null || break
        sleep 1
    done
    kill "$pid"
    wait "$pid" 2> /dev/null || true
    if [ -n "$redis_pid" ]; then
        kill "$redis_pid"
        wait "$redis_pid" 2> /dev/null || true
        redis_pid=""
    fi
    python3 - "$dir" > "$dir/count" << 'EOF'
import glob, json, sys
d = sys.argv[1]
def totals(path):
    for line in open(path):
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    return 0
# The first file of the re-executed process is its main thread, the loop.
profiles = sorted(glob.glob(d + "/callgrind.out*"), key=lambda p: (len(p), p))
process = [p for p in profiles if totals(p) > 0]
loop = process[0] if process else None
acks = json.load(open(d + "/wsload.json"))["acked"]
print(acks, totals(loop) if loop else 0, sum(totals(p) for p in process), loop or "")
EOF
}

# The compactor's instructions inside checkpoints per record they wrote, for a run's folder
# ("-" for fewer than 1,000 records: a checkpoint's fixed costs would dominate).
compactor_per_record() {
    local dir="$1" records profile
    records="$(cat "$dir"/data/messages/*/*.idx 2> /dev/null | wc -l)"
    [ "$records" -ge 1000 ] || { echo "-"; return; }
    for profile in "$dir"/callgrind.out*; do
        callgrind_annotate --inclusive=yes --threshold=100 "$profile" 2> /dev/null \
            | awk -v records="$records" '/runCheckpoint/ { gsub(",", "", $1); printf "%d\n", $1 / records; exit }'
    done | head -1
}

printf '%-40s %14s %14s %10s %24s\n' build "loop instr/ack" "all instr/ack" acks "compactor instr/record"
for bin in "$@"; do
    bin="$(realpath "$bin")"
    name="$(basename "$bin")-$(sha1sum "$bin" | cut -c1-8)"
    # valgrind 3.19 cannot read the DWARF 5 that Swift 6.3 writes: a copy without debug
    # information, its symbols kept.
    strip -g -o "$OUT_DIR/$name" "$bin"
    count_run "$OUT_DIR/$name" "$OUT_DIR/$name-short" "$SHORT"
    count_run "$OUT_DIR/$name" "$OUT_DIR/$name-long" "$LONG"
    read -r short_acks short_loop short_all short_profile < "$OUT_DIR/$name-short/count"
    read -r long_acks long_loop long_all long_profile < "$OUT_DIR/$name-long/count"
    acks=$((long_acks - short_acks))
    [ "$acks" -gt 0 ] || { echo "instructions: the long run acknowledged no more than the short one" >&2; exit 1; }
    printf '%-40s %14d %14d %10d %24s\n' "$(basename "$bin")" $(((long_loop - short_loop) / acks)) $(((long_all - short_all) / acks)) "$acks" \
        "$(compactor_per_record "$OUT_DIR/$name-long")" \
        | tee -a "$OUT_DIR/instructions.txt"
    if [ "${TOP:-0}" -gt 0 ]; then
        python3 - "$short_profile" "$long_profile" "$acks" "$TOP" << 'EOF'
import re, subprocess, sys
def self_costs(path):
    out = subprocess.run(["callgrind_annotate", "--threshold=100", path], capture_output=True, text=True).stdout
    costs = {}
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\([ \d.]+%\)\s+(?:\S*?:)?(\S.*?)(?: \[.*\])?$", line)
        if m and "PROGRAM TOTALS" not in line:
            costs[m.group(2)] = costs.get(m.group(2), 0) + int(m.group(1).replace(",", ""))
    return costs
short, long = self_costs(sys.argv[1]), self_costs(sys.argv[2])
acks, top = int(sys.argv[3]), int(sys.argv[4])
rows = sorted(((long.get(k, 0) - short.get(k, 0)) / acks, k) for k in long)
for per_ack, name in reversed(rows[-top:]):
    print("    %8.0f  %s" % (per_ack, name[:120]))
EOF
    fi
done
