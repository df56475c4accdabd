# Shared pieces of the pinned room-relay benchmarks (sourced by m1.sh and m3.sh).
#
# Layout of every measurement: the server under test already runs pinned on core 1 (start it with
# `taskset -c 1 ...` and a raised `ulimit -n`); wsload runs here pinned on core 0. Each wsload run is
# bounded by `timeout` on top of wsload's own alarm().
#
# Environment knobs (defaults in brackets):
#   WSLOAD [/tmp/wsload/wsload]   the load generator binary
#   SERVER_CORE [1] CLIENT_CORE [0]   cores for the server (advice only) and for wsload
#   DURATION [10] WARMUP [2]     measured and unmeasured seconds per run
#   RUNS [3]                     runs per rate; the table shows medians
#   SIZE [64]                    payload bytes
#   SLO_MS [250] STRICT_MS [50]  p99 bounds for the "sustained" and "strict" rates
#   RATE_UNIT [deliveries]       RATES are deliveries/s (converted to publishes/s for wsload);
#                                `publishes` passes them to wsload --rate unchanged
#   BIND_RANGE [4]               wsload --bind-range (source addresses 127.0.0.1..N, so repeated
#                                runs of thousands of connections do not run out of ports)
#   OUT_DIR [/tmp/bench-<name>-<time>]   where the JSON lines and logs go
#   URL_QUERY [notices=0]        query string appended to /rooms/{room}

WSLOAD="${WSLOAD:-/tmp/wsload/wsload}"
CLIENT_CORE="${CLIENT_CORE:-0}"
DURATION="${DURATION:-10}"
WARMUP="${WARMUP:-2}"
RUNS="${RUNS:-3}"
SIZE="${SIZE:-64}"
SLO_MS="${SLO_MS:-250}"
STRICT_MS="${STRICT_MS:-50}"
RATE_UNIT="${RATE_UNIT:-deliveries}"
BIND_RANGE="${BIND_RANGE:-4}"
URL_QUERY="${URL_QUERY:-notices=0}"
DEFAULT_RATES="500 1000 2000 5000 10000 20000 40000 80000 160000 320000 640000"
BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# Fails early with a clear message when a prerequisite is missing.
bench_preflight() {
    [ -x "$WSLOAD" ] || { echo "bench: wsload not found at $WSLOAD (bash /work/shared/tools/wsload/build.sh)" >&2; exit 2; }
    command -v taskset > /dev/null || { echo "bench: taskset missing (apt-get install util-linux)" >&2; exit 2; }
    # Thousands of sockets on this side; the server side must be raised by whoever starts it.
    ulimit -n "$(ulimit -Hn)" 2> /dev/null || true
    local load
    load="$(cut -d' ' -f1 /proc/loadavg)"
    echo "bench: load average $load, ulimit -n $(ulimit -n), wsload on core $CLIENT_CORE, results in $OUT_DIR" >&2
}

# The port must be a number and something must be listening on it.
bench_check_port() {
    case "$1" in ''|*[!0-9]*) echo "bench: PORT must be a number, got '$1'" >&2; exit 2;; esac
    if ! (exec 3<> "/dev/tcp/127.0.0.1/$1") 2> /dev/null; then
        echo "bench: nothing listens on 127.0.0.1:$1" >&2
        exit 2
    fi
}

# One pinned, bounded wsload run; prints its JSON line (or nothing) and keeps stderr in a log.
# Usage: bench_wsload LOGFILE ARGS...
bench_wsload() {
    local log="$1"
    shift
    local limit=$(( ${DURATION%.*} + ${WARMUP%.*} + 120 ))
    timeout "$limit" taskset -c "$CLIENT_CORE" "$WSLOAD" "$@" 2> "$log" || true
}

# Steps the open-loop rate up through RATES; RUNS runs per rate; stops after the first rate whose
# runs lose anything or whose median p99 exceeds SLO_MS. Prints the table and the verdicts, and
# writes the exact command line of the first run to OUT_DIR/command.txt.
# Usage: bench_step NAME PORT ROOMS MEMBERS RATES...
# Wrappers (tls-lib.sh) may set SCHEME [ws] and WSLOAD_ARGS (more wsload options for every run).
bench_step() {
    local name="$1" port="$2" rooms="$3" members="$4"
    shift 4
    local rates=("$@")
    [ ${#rates[@]} -gt 0 ] || read -r -a rates <<< "$DEFAULT_RATES"
    local url="${SCHEME:-ws}://127.0.0.1:$port/rooms/{room}?$URL_QUERY"
    local results="$OUT_DIR/results.jsonl"
    : > "$results"
    echo "bench $name: $rooms rooms x $members members, 1 publisher/room, ${SIZE}-byte, ${DURATION}s (+${WARMUP}s warmup), $RUNS runs/rate, rates in $RATE_UNIT/s" >&2
    local rate pubs target run json previous=""
    for rate in "${rates[@]}"; do
        # A target becomes a whole number of publishes/s; the table shows the delivery rate that
        # gives (so low targets in a big room collapse into one step, which runs once).
        read -r pubs target <<< "$(python3 "$BENCH_DIR/wsload_table.py" pubrate "$rate" "$RATE_UNIT" "$rooms" "$members")"
        [ "$pubs" != "$previous" ] || continue
        previous="$pubs"
        local args=(--url-template "$url" --rooms "$rooms" --members "$members" --publishers-per-room 1
            --rate "$pubs" --size "$SIZE" --duration "$DURATION" --warmup "$WARMUP" --bind-range "$BIND_RANGE"
            -q ${WSLOAD_ARGS[@]+"${WSLOAD_ARGS[@]}"})
        [ -s "$OUT_DIR/command.txt" ] || echo "taskset -c $CLIENT_CORE $WSLOAD ${args[*]}" > "$OUT_DIR/command.txt"
        for run in $(seq "$RUNS"); do
            json="$(bench_wsload "$OUT_DIR/wsload-$target-$run.log" "${args[@]}")"
            [ -n "$json" ] || json='{"tool":"wsload","ok":false,"missing":true}'
            printf '{"target":%s,"pub_rate":%s,"run":%s,"wsload":%s}\n' "$target" "$pubs" "$run" "$json" >> "$results"
            python3 "$BENCH_DIR/wsload_table.py" line "$results" >&2
            sleep 1
        done
        if ! python3 "$BENCH_DIR/wsload_table.py" passes "$results" "$target" "$SLO_MS"; then
            echo "bench $name: rate $target/s failed (loss, errors or median p99 > ${SLO_MS} ms); stopping" >&2
            break
        fi
    done
    echo "command (first rate): $(cat "$OUT_DIR/command.txt")" >&2
    python3 "$BENCH_DIR/wsload_table.py" table "$results" "$SLO_MS" "$STRICT_MS" "$name" | tee "$OUT_DIR/table.txt"
}
