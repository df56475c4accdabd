# The pieces every workload of scripts/bench/run shares (sourced, not run): the servers under
# test, the load generator, one pinned and bounded run, the rate stepping and the medians.
#
# Every measurement has the same layout: the server pinned to SERVER_CPU, the load to LOAD_CPU
# (taskset), each run bounded by `timeout` on top of the generator's own alarm(). The load
# average is logged with every run: the machine is shared, and a busy neighbour takes CPU
# straight from the server under test.
#
# Environment (defaults in brackets):
#   BIN [.build/release/switchboard]   the server the workloads start (fresh, per run or series)
#   PORT, TLS_PORT, SERVER_PID         use a server that is already running instead (pinned by
#                                      whoever started it: `ulimit -n 20000; taskset -c 1 ...`),
#                                      e.g. the Hummingbird peer; SERVER_PID for m2 and CPU figures
#   SB_CONFIG [Config/switchboard.json]  the started server's configuration file; empty: the
#                                      binary's defaults (ab uses them, so that an older build
#                                      does not meet settings it does not know)
#   WSLOAD [Benchmarks/wsload/wsload]  built with Benchmarks/wsload/build.sh when missing
#   SERVER_CPU [1] LOAD_CPU [0]        taskset cores
#   DURATION [10] WARMUP [2] RUNS [3]  measured and unmeasured seconds per run, runs per step
#   DATA_ROOT [/tmp]                   where data folders go (the real disk, for fsync)
#   SERVER_ARGS                        more arguments for the started server (cluster-durable.sh:
#                                      --redis URL; the run then waits for /readyz)
#   OUT_DIR [/tmp/bench-WORKLOAD-TIME] JSON lines, logs, tables, the command of the first run
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BENCH_DIR="$ROOT/scripts/bench"
# Absolute: the server is started from OUT_DIR, where a relative path would not resolve.
BIN="$(realpath -m "${BIN:-$ROOT/.build/release/switchboard}")"
SB_CONFIG="${SB_CONFIG-$ROOT/Config/switchboard.json}"
WSLOAD="${WSLOAD:-$ROOT/Benchmarks/wsload/wsload}"
SERVER_CPU="${SERVER_CPU:-1}"
LOAD_CPU="${LOAD_CPU:-0}"
DURATION="${DURATION:-10}"
WARMUP="${WARMUP:-2}"
RUNS="${RUNS:-3}"
DATA_ROOT="${DATA_ROOT:-/tmp}"
SERVER_PID="${SERVER_PID:-}"
SERVER_PORT=""
SERVER_TLS_PORT=""
STARTED_PID=""

# The Python helpers (history-paging.py, media-upload.py, ...) speak WebSocket with the
# `websockets` library: the end-to-end suite's environment has it (scripts/test makes it).
[ -x "$ROOT/.build-venv/bin/python3" ] && PATH="$ROOT/.build-venv/bin:$PATH"

# Fails early with a clear message when a prerequisite is missing; builds wsload when needed.
bench_preflight() {
    command -v taskset > /dev/null || { echo "bench: taskset missing (apt-get install util-linux)" >&2; exit 2; }
    if [ ! -x "$WSLOAD" ]; then
        [ "$WSLOAD" = "$ROOT/Benchmarks/wsload/wsload" ] || { echo "bench: no load generator at $WSLOAD" >&2; exit 2; }
        "$ROOT/Benchmarks/wsload/build.sh" > /dev/null
    fi
    # Thousands of sockets on this side; a started server inherits the raised limit.
    ulimit -n "$(ulimit -Hn)" 2> /dev/null || true
    mkdir -p "$OUT_DIR"
    echo "bench: $(date -u +%FT%TZ) load average $(cut -d' ' -f1-3 /proc/loadavg), ulimit -n $(ulimit -n)," \
        "server on core $SERVER_CPU, load on core $LOAD_CPU, results in $OUT_DIR" >&2
}

# The 1-minute load average, logged with each run.
load_average() { cut -d' ' -f1 /proc/loadavg; }

# A loopback port nothing listens on now (bound with port 0, then released): a random one can
# be a load client's ephemeral port, and the server then fails to start.
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# The machine's CPU use at normal priority over the next second, in % of one core (200 = both
# cores busy), steal included. Taken before a run, while the server under test idles, it is what
# others take from the run; niced work (a fuzzer at nice 19) yields to the run and is left out.
busy_pct() {
    python3 -c '
import time
def sample():
    f = [int(x) for x in open("/proc/stat").readline().split()[1:9]]
    return sum(f), f[1] + f[3] + f[4]
t0, i0 = sample()
time.sleep(1)
t1, i1 = sample()
print(round(200 * (1 - (i1 - i0) / (t1 - t0)), 1) if t1 > t0 else 0.0)'
}

# Waits (up to QUIET_WAIT seconds, default 0) until the machine is quieter than QUIET_BUSY [30]
# % of a core; prints the last busy_pct reading.
wait_quiet() {
    local waited=0 busy
    busy="$(busy_pct)"
    while [ "$waited" -lt "${QUIET_WAIT:-0}" ] && python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) > float(sys.argv[2]) else 1)" "$busy" "${QUIET_BUSY:-30}"; do
        sleep 4
        waited=$((waited + 5))
        busy="$(busy_pct)"
    done
    echo "$busy"
}

# A self-signed certificate for 127.0.0.1 in OUT_DIR/cert (once).
bench_cert() {
    [ -f "$OUT_DIR/cert/cert.pem" ] && return 0
    mkdir -p "$OUT_DIR/cert"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$OUT_DIR/cert/key.pem" \
        -out "$OUT_DIR/cert/cert.pem" -days 30 -subj /CN=localhost \
        -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" 2> /dev/null
}

# The abuse limits a load generator trips by design, lifted for every server a benchmark starts
# (one connection or user sends far more than 100 messages/s, thousands of connections come from
# four source addresses; docs/security.md): `env "${BENCH_LIMITS[@]}" COMMAND`.
BENCH_LIMITS=(SWITCHBOARD_MESSAGES_PER_SECOND=1000000 SWITCHBOARD_USER_MESSAGES_PER_SECOND=1000000
    SWITCHBOARD_ROOM_MESSAGES_PER_SECOND=1000000 SWITCHBOARD_ROOM_BYTES_PER_SECOND=1000000000
    SWITCHBOARD_MAX_CONNECTIONS_PER_ADDRESS=0 SWITCHBOARD_GROUPS_PER_HOUR=1000000)

# server_start [FLAGS...]: the server for the next runs. With PORT set, the running one (nothing
# is started). Otherwise BIN on SERVER_CPU, on free ports (plain, and TLS with a self-signed
# certificate), on an empty data folder, with BENCH_LIMITS lifted; waits for its "listening on" lines. FLAGS go
# to the server (e.g. --durability none); SERVER_DATA names a data folder to start on instead. Sets SERVER_PID, SERVER_PORT and SERVER_TLS_PORT.
server_start() {
    if [ -n "${PORT:-}" ]; then
        SERVER_PORT="$PORT"
        SERVER_TLS_PORT="${TLS_PORT:-}"
        bench_check_port "$SERVER_PORT"
        return 0
    fi
    [ -x "$BIN" ] || { echo "bench: no server binary at $BIN (swift build -c release --static-swift-stdlib --product switchboard)" >&2; exit 2; }
    bench_cert
    local data="${SERVER_DATA:-$DATA_ROOT/bench-data-$$}"
    local log="$OUT_DIR/server.log"
    local config=()
    [ -n "$SB_CONFIG" ] && [ -f "$SB_CONFIG" ] && config=(--config "$SB_CONFIG")
    [ -n "${SERVER_DATA:-}" ] || rm -rf "$data"
    # From OUT_DIR, so that without SB_CONFIG the server finds no Config/ and runs on its defaults.
    (cd "$OUT_DIR" && exec env "${BENCH_LIMITS[@]}" taskset -c "$SERVER_CPU" "$BIN" serve "${config[@]}" \
        --host 127.0.0.1 --port 0 --tls-port 0 --tls-cert "$OUT_DIR/cert/cert.pem" --tls-key "$OUT_DIR/cert/key.pem" \
        --data "$data" --log-level "${SERVER_LOG_LEVEL:-error}" "$@" ${SERVER_ARGS:-} > "$log" 2>&1) &
    STARTED_PID=$!
    SERVER_PID=$STARTED_PID
    local i
    for i in $(seq 600); do
        SERVER_PORT="$(sed -n 's|^listening on ws://[0-9.]*:\([0-9]*\).*|\1|p' "$log" | head -1)"
        SERVER_TLS_PORT="$(sed -n 's|^listening on wss://[0-9.]*:\([0-9]*\).*|\1|p' "$log" | head -1)"
        if [ -n "$SERVER_PORT" ] && [ -n "$SERVER_TLS_PORT" ]; then
            # A cluster node (SERVER_ARGS with --redis) takes changes once it is ready.
            [ -z "${SERVER_ARGS:-}" ] && return 0
            [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$SERVER_PORT/readyz" || true)" = 200 ] && return 0
        fi
        kill -0 "$STARTED_PID" 2> /dev/null || { echo "bench: the server exited:" >&2; cat "$log" >&2; exit 1; }
        sleep 0.05
    done
    echo "bench: the server did not start within 30 s (after $i polls)" >&2
    server_stop
    exit 1
}

# server_stop: SIGTERM to the server server_start started (SIGKILL after 10 s), then its data goes.
server_stop() {
    [ -n "$STARTED_PID" ] || return 0
    kill -TERM "$STARTED_PID" 2> /dev/null || true
    local i=0
    while kill -0 "$STARTED_PID" 2> /dev/null && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
    kill -KILL "$STARTED_PID" 2> /dev/null || true
    wait "$STARTED_PID" 2> /dev/null || true
    STARTED_PID=""
    SERVER_PID=""
    rm -rf "$DATA_ROOT/bench-data-$$"
}
trap server_stop EXIT
trap 'exit 130' INT TERM

# The port must be a number and something must be listening on it.
bench_check_port() {
    case "$1" in ''|*[!0-9]*) echo "bench: PORT must be a number, got '$1'" >&2; exit 2;; esac
    if ! (exec 3<> "/dev/tcp/127.0.0.1/$1") 2> /dev/null; then
        echo "bench: nothing listens on 127.0.0.1:$1" >&2
        exit 2
    fi
}

# bench_load LOG ARGS...: one pinned, bounded load run (wsload ARGS); prints its JSON line, with
# "load_avg" (the 1-minute load average at the start), "busy_before_pct" (what the machine used in
# the second before, see wait_quiet) and, when the server's PID is known,
# "server_cpu_pct_run" (its CPU use, all threads, % of one core, over the whole run, set-up
# included) added. Under 100 while the clients starve means the server waited (fsync, wakeups) or
# was not scheduled (a busy machine). With CPU_WINDOW=START:SECONDS, also "server_cpu_pct_window",
# its CPU use over SECONDS from START seconds after the generator started, or after the server
# holds CPU_WINDOW_FDS descriptors (inside the measured window, so set-up and draining are left out), and from it "server_us_per_ack" or
# "server_us_per_delivery" (CPU µs per acknowledged send or per delivery at the measured rate),
# and "server_threads": the same figure for each of the server's threads by name (the event
# loop, `store-writer`, `store-compact`, ...; threads under 0.5% of a core left out), split
# into user and system time ("user_us_per_op", "sys_us_per_op"). ALSO_PIDS (process ids) adds
# the threads of other processes to it by name, e.g. the redis-server a cluster node writes to.
# A run that printed nothing gives {"ok":false,"missing":true}.
bench_load() {
    local log="$1" load busy t0 c0=0 t1 c1=0 line window="" sampler=""
    shift
    busy="$(wait_quiet)"
    load="$(load_average)"
    t0=$(date +%s%N)
    [ -n "$SERVER_PID" ] && c0=$(awk '{print $14 + $15}' "/proc/$SERVER_PID/stat")
    if [ -n "$SERVER_PID" ] && [ -n "${CPU_WINDOW:-}" ]; then
        window="$(mktemp)"
        (
            # Relay runs connect thousands of sockets first: START counts from when the server
            # holds CPU_WINDOW_FDS descriptors (polled for up to a minute).
            for _ in $(seq 1200); do
                [ "$(ls "/proc/$SERVER_PID/fd" 2> /dev/null | wc -l)" -ge "${CPU_WINDOW_FDS:-0}" ] && break
                sleep 0.05
            done
            sleep "${CPU_WINDOW%%:*}"
            a=$(awk '{print $14 + $15}' "/proc/$SERVER_PID/stat"); s=$(date +%s%N)
            thread_ticks > "$window.threads-a"
            sleep "${CPU_WINDOW##*:}"
            b=$(awk '{print $14 + $15}' "/proc/$SERVER_PID/stat"); e=$(date +%s%N)
            thread_ticks > "$window.threads-b"
            echo "$((b - a)) $((e - s))" > "$window"
        ) &
        sampler=$!
    fi
    line="$(timeout "$(( ${DURATION%.*} + ${WARMUP%.*} + 240 ))" taskset -c "$LOAD_CPU" "$WSLOAD" "$@" 2> "$log" || true)"
    t1=$(date +%s%N)
    [ -n "$SERVER_PID" ] && c1=$(awk '{print $14 + $15}' "/proc/$SERVER_PID/stat" 2> /dev/null || echo "$c0")
    [ -z "$sampler" ] || wait "$sampler" 2> /dev/null || true
    python3 - "$line" "$load" "$busy" "${SERVER_PID:+$((c1 - c0))}" "$((t1 - t0))" "${window:+$(cat "$window" 2> /dev/null)}" \
        "${window:+$window.threads}" <<'PY'
import json, os, sys
line, load, busy, ticks, ns, window, threads = sys.argv[1:8]
r = json.loads(line) if line.startswith("{") else {"ok": False, "missing": True}
r["load_avg"] = float(load)
r["busy_before_pct"] = float(busy)
if ticks:
    r["server_cpu_pct_run"] = round(100 * int(ticks) / os.sysconf("SC_CLK_TCK") / (int(ns) / 1e9), 1)
if window.strip():
    wticks, wns = (int(x) for x in window.split())
    pct = 100 * wticks / os.sysconf("SC_CLK_TCK") / (wns / 1e9)
    r["server_cpu_pct_window"] = round(pct, 1)
    rate = r.get("acked_per_s") or r.get("delivered_per_s")
    for key, name in (("acked_per_s", "server_us_per_ack"), ("delivered_per_s", "server_us_per_delivery")):
        if r.get(key):
            r[name] = round(pct / 100 * 1e6 / r[key], 2)
            break
    def per_name(path):
        totals = {}
        try:
            for entry in open(path):
                name, user, system = entry.rstrip("\n").rsplit("\t", 2)
                old = totals.get(name, (0, 0))
                totals[name] = (old[0] + int(user), old[1] + int(system))
        except (OSError, ValueError):
            pass
        return totals
    before, after = per_name(threads + "-a"), per_name(threads + "-b")
    split = {}
    window_ticks = os.sysconf("SC_CLK_TCK") * (wns / 1e9)
    for name, (user, system) in after.items():
        user -= before.get(name, (0, 0))[0]
        system -= before.get(name, (0, 0))[1]
        thread_pct = 100 * (user + system) / window_ticks
        if thread_pct >= 0.5:
            split[name] = {"cpu_pct": round(thread_pct, 1)}
            if rate:
                split[name]["us_per_op"] = round(thread_pct / 100 * 1e6 / rate, 2)
                split[name]["user_us_per_op"] = round(user / window_ticks * 1e6 / rate, 2)
                split[name]["sys_us_per_op"] = round(system / window_ticks * 1e6 / rate, 2)
    if split:
        r["server_threads"] = split
print(json.dumps(r, separators=(",", ":")))
PY
    [ -z "$window" ] || rm -f "$window" "$window.threads-a" "$window.threads-b"
}

# loop_thread: the event loop's name among "server_threads": the binary's name, cut to the
# kernel's 15 characters.
loop_thread() {
    basename "$BIN" | cut -c1-15
}

# thread_ticks: each thread of SERVER_PID and of ALSO_PIDS as "NAME<tab>USER TICKS<tab>SYSTEM
# TICKS", one a line.
thread_ticks() {
    local pid task
    for pid in "$SERVER_PID" ${ALSO_PIDS:-}; do
        for task in /proc/"$pid"/task/*; do
            printf '%s\t%s\n' "$(cat "$task/comm" 2> /dev/null)" "$(awk '{print $14 "\t" $15}' "$task/stat" 2> /dev/null || printf '0\t0')"
        done
    done
}

# median FILE FIELD...: the median of each dotted JSON field over the lines of FILE.
median() {
    python3 - "$@" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
out = {"runs": len(rows), "all_ok": all(r.get("ok", True) for r in rows)}
for field in sys.argv[2:]:
    values = []
    for r in rows:
        v = r
        for k in field.split("."):
            v = v.get(k) if isinstance(v, dict) else None
        if v is not None:
            values.append(v)
    out[field] = statistics.median(values) if values else None
print(json.dumps(out))
PY
}

# relay_mode MODE: sets SCHEME and MODE_ARGS (wsload options) for a transport, or exits.
#   plain (ws://), tls (wss://), deflate (ws:// + permessage-deflate), tls-deflate
relay_mode() {
    MODE_ARGS=(--text "$TEXT")
    case "$1" in
        plain) SCHEME=ws ;;
        tls) SCHEME=wss ;;
        deflate) SCHEME=ws; MODE_ARGS+=(--deflate --deflate-offer "${DEFLATE_OFFER:-client}") ;;
        tls-deflate) SCHEME=wss; MODE_ARGS+=(--deflate --deflate-offer "${DEFLATE_OFFER:-client}") ;;
        *) echo "bench: MODE must be plain, tls, deflate or tls-deflate, got '$1'" >&2; exit 2 ;;
    esac
    [ "$SCHEME" = ws ] || [ -n "$SERVER_TLS_PORT" ] || { echo "bench: $1 needs a TLS port (TLS_PORT)" >&2; exit 2; }
}

# relay_args ROOMS MEMBERS PUBLISHES_PER_S: the wsload options of one relay run in the current
# MODE (SCHEME, MODE_ARGS), into ARGS.
relay_args() {
    local port="$SERVER_PORT"
    [ "$SCHEME" = ws ] || port="$SERVER_TLS_PORT"
    ARGS=(--url-template "$SCHEME://127.0.0.1:$port/rooms/{room}?$URL_QUERY" --rooms "$1" --members "$2"
        --publishers-per-room 1 --rate "$3" --size "$SIZE" --duration "$DURATION" --warmup "$WARMUP"
        --bind-range "$BIND_RANGE" --connect-timeout "$CONNECT_TIMEOUT" -q "${MODE_ARGS[@]}")
    # A second node of a cluster for the odd members of each room (scripts/bench/cluster.sh).
    if [ -n "${SPLIT_PORT:-}" ]; then ARGS+=(--split-port "$SPLIT_PORT"); fi
}

# bench_step NAME ROOMS MEMBERS RATES...: steps the open-loop rate up through RATES (target
# deliveries/s, or publishes/s with RATE_UNIT=publishes), RUNS runs per rate, against the server
# of server_start; stops after the first rate whose runs lose anything or whose median p99
# exceeds SLO_MS. Prints each run, then the table and the sustained / strict verdicts; writes the
# command line of the first run to OUT_DIR/command.txt.
bench_step() {
    local name="$1" rooms="$2" members="$3"
    shift 3
    local results="$OUT_DIR/results.jsonl" rate pubs target run json previous=""
    : > "$results"
    echo "bench $name: $rooms rooms x $members members, 1 publisher/room, ${SIZE}-byte $TEXT text, ${DURATION}s" \
        "(+${WARMUP}s warmup), $RUNS runs/rate, rates in $RATE_UNIT/s" >&2
    for rate in "$@"; do
        # A target becomes a whole number of publishes/s; the table shows the delivery rate that
        # gives (so low targets in a big room collapse into one step, which runs once).
        read -r pubs target <<< "$(python3 "$BENCH_DIR/wsload_table.py" pubrate "$rate" "$RATE_UNIT" "$rooms" "$members")"
        [ "$pubs" != "$previous" ] || continue
        previous="$pubs"
        relay_args "$rooms" "$members" "$pubs"
        [ -s "$OUT_DIR/command.txt" ] || echo "taskset -c $LOAD_CPU $WSLOAD ${ARGS[*]}" > "$OUT_DIR/command.txt"
        for run in $(seq "$RUNS"); do
            json="$(bench_load "$OUT_DIR/wsload-$target-$run.log" "${ARGS[@]}")"
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
