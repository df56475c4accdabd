# Shared by chat-durable.sh, chat-fanout.sh and recovery.sh (sourced, not run).
#
# Environment: BIN (switchboard binary, default .build/release/switchboard), DATA_ROOT (where the
# data folders go, default /tmp: the real disk), SERVER_CPU / LOAD_CPU (taskset cores, 1 / 0).
set -eu
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BIN="${BIN:-$ROOT/.build/release/switchboard}"
DATA_ROOT="${DATA_ROOT:-/tmp}"
SERVER_CPU="${SERVER_CPU:-1}"
LOAD_CPU="${LOAD_CPU:-0}"
CHATLOAD="$ROOT/Benchmarks/chatload/chatload"
SERVER_PID=""
SERVER_PORT=""

[ -x "$BIN" ] || { echo "no server binary at $BIN (swift build -c release --product switchboard)" >&2; exit 2; }
[ -x "$CHATLOAD" ] || "$ROOT/Benchmarks/chatload/build.sh" >/dev/null

# start_server DATA_DIR [extra flags...]: starts the server on SERVER_CPU with a free port and
# waits for its "listening on" line; sets SERVER_PID and SERVER_PORT. Rate limiting is lifted
# (messagesPerSecond and userMessagesPerSecond 1,000,000) because one benchmark connection sends
# far more than 100/s.
start_server() {
    local dir="$1"; shift
    local log="$dir.log"
    SWITCHBOARD_MESSAGES_PER_SECOND=1000000 SWITCHBOARD_USER_MESSAGES_PER_SECOND=1000000 SWITCHBOARD_LOG_LEVEL="${SERVER_LOG_LEVEL:-notice}" \
        taskset -c "$SERVER_CPU" "$BIN" --host 127.0.0.1 --port 0 --data "$dir" "$@" >"$log" 2>&1 &
    SERVER_PID=$!
    local i=0
    while [ $i -lt 600 ]; do
        SERVER_PORT="$(grep -o 'listening on ws://[0-9.]*:[0-9]*' "$log" 2>/dev/null | head -1 | sed 's/.*://')" || true
        [ -n "$SERVER_PORT" ] && return 0
        kill -0 "$SERVER_PID" 2>/dev/null || { echo "server exited:" >&2; cat "$log" >&2; exit 1; }
        sleep 0.05
        i=$((i + 1))
    done
    echo "server did not start within 30 s" >&2
    stop_server
    exit 1
}

# stop_server: SIGTERM, then SIGKILL after 10 s.
stop_server() {
    [ -n "$SERVER_PID" ] || return 0
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    local i=0
    while kill -0 "$SERVER_PID" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
    kill -KILL "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
}
trap stop_server EXIT INT TERM

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
            v = v[k]
        values.append(v)
    out[field] = statistics.median(values) if values else None
print(json.dumps(out))
PY
}

# with_server_cpu COMMAND...: runs COMMAND (a load client printing one JSON line) and adds
# "server_cpu_pct_run" to that line: the server's CPU use (all threads, % of one core) over the
# client's whole run, set-up included. Under 100 while the client is starved of replies means the
# server was waiting (fsync, wakeups) or not scheduled (a busy machine), not CPU-bound.
with_server_cpu() {
    local t0 c0 t1 c1 line
    t0=$(date +%s%N); c0=$(awk '{print $14 + $15}' "/proc/$SERVER_PID/stat")
    line="$("$@" || true)"
    t1=$(date +%s%N); c1=$(awk '{print $14 + $15}' "/proc/$SERVER_PID/stat")
    python3 -c "
import json, os, sys
line = sys.argv[1]
r = json.loads(line) if line.startswith('{') else {'ok': False}
r['server_cpu_pct_run'] = round(100 * ($c1 - $c0) / os.sysconf('SC_CLK_TCK') / (($t1 - $t0) / 1e9), 1)
print(json.dumps(r, separators=(',', ':')))" "$line"
}
