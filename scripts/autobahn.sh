#!/usr/bin/env bash
# Runs the Autobahn|Testsuite (fuzzingclient) against a switchboard binary's /echo endpoint.
#
# Usage: scripts/autobahn.sh SWITCHBOARD_BIN [CACHE_DIR] [CASES_JSON] [EXCLUDE_JSON] [TIMEOUT_S]
#   SWITCHBOARD_BIN  the server executable, e.g. .build/release/switchboard
#   CACHE_DIR        where the Python 3 harness lives; set up there when missing
#                    (default: ${XDG_CACHE_HOME:-$HOME/.cache}/switchboard-autobahn)
#   CASES_JSON       cases to run (default '["*"]'), e.g. '["1.*","2.*","5.*"]'
#   EXCLUDE_JSON     cases to skip (default '[]'), e.g. '["9.*","12.*","13.*"]'
#   TIMEOUT_S        limit for the suite itself (default 1800; 1-7 and 10 take seconds,
#                    9.* ~20 s, 12.* and 13.* 4 to 13 min, mostly the harness)
# Environment: AUTOBAHN_OUT (report folder, default a fresh temp folder),
#              SWITCHBOARD_ARGS (extra server flags, split on spaces),
#              AUTOBAHN_TLS=1 (the cases run over wss://, against a self-signed certificate).
#
# The server is started as `SWITCHBOARD_BIN --host 127.0.0.1 --port 0 --data <tmp>` (with
# AUTOBAHN_TLS, also `--tls-port 0` and a certificate the binary makes); the port is read from
# its `listening on ws://HOST:PORT` (or wss://) line. Prints the summary and the cases that are
# FAILED or UNIMPLEMENTED; exits 0 only when there are none, the report exists and the server
# survived the run. Everything is bounded: harness setup 900 s, server start 30 s, suite TIMEOUT_S.
set -euo pipefail

if [ $# -lt 1 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
    sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
BIN="$1"
CACHE="${2:-${XDG_CACHE_HOME:-$HOME/.cache}/switchboard-autobahn}"
CASES="${3:-[\"*\"]}"
EXCLUDE="${4:-[]}"
TIMEOUT_S="${5:-1800}"
[ -x "$BIN" ] || { echo "autobahn.sh: '$BIN' is not an executable" >&2; exit 2; }
case "$TIMEOUT_S" in ''|*[!0-9]*) echo "autobahn.sh: TIMEOUT_S must be a number of seconds" >&2; exit 2;; esac
BIN="$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")"

HERE="$(cd "$(dirname "$0")" && pwd)"

# 1. Harness: build it once per cache folder (needs PyPI), from scripts/autobahn/.
if [ ! -x "$CACHE/venv/bin/wstest" ]; then
    echo "autobahn.sh: setting up the harness in $CACHE (1-2 min)"
    mkdir -p "$CACHE"
    timeout 900 bash "$HERE/autobahn/setup-harness.sh" "$CACHE" > "$CACHE/setup.log" 2>&1 ||
        { echo "autobahn.sh: harness setup failed, see $CACHE/setup.log" >&2; tail -20 "$CACHE/setup.log" >&2; exit 1; }
fi

# 2. Server on a free loopback port, with a throwaway data folder.
WORK="$(mktemp -d /tmp/switchboard-autobahn.XXXXXX)"
OUT="${AUTOBAHN_OUT:-$WORK/out}"
SERVER_LOG="$WORK/server.log"
SERVER_PID=""
cleanup() {
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill -TERM "$SERVER_PID" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    rm -rf "$WORK/data" "$WORK/cert"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$WORK/data"
SCHEME=ws
TLS_ARGS=()
if [ "${AUTOBAHN_TLS:-0}" = 1 ]; then
    SCHEME=wss
    "$BIN" cert --self-signed --out "$WORK/cert" > /dev/null
    TLS_ARGS=(--tls-port 0 --tls-cert "$WORK/cert/cert.pem" --tls-key "$WORK/cert/key.pem")
fi
# shellcheck disable=SC2086  # SWITCHBOARD_ARGS is deliberately split into flags
"$BIN" --host 127.0.0.1 --port 0 "${TLS_ARGS[@]}" --data "$WORK/data" ${SWITCHBOARD_ARGS:-} > "$SERVER_LOG" 2>&1 &
SERVER_PID=$!
PORT=""
for _ in $(seq 300); do
    PORT="$(sed -n "s#.*listening on $SCHEME://[^ ]*:\([0-9][0-9]*\).*#\1#p" "$SERVER_LOG" | head -1)"
    [ -n "$PORT" ] && break
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
done
if [ -z "$PORT" ]; then
    echo "autobahn.sh: server did not print 'listening on $SCHEME://HOST:PORT' within 30 s; its output:" >&2
    cat "$SERVER_LOG" >&2
    exit 1
fi
URL="$SCHEME://127.0.0.1:$PORT/echo"
echo "autobahn.sh: server pid $SERVER_PID on $URL; cases $CASES, excluded $EXCLUDE, limit ${TIMEOUT_S}s"

# 3. The suite, bounded by TIMEOUT_S (it writes its report only at the end).
mkdir -p "$OUT"
cat > "$OUT/spec.json" <<JSON
{"outdir": "$OUT/report", "servers": [{"agent": "switchboard", "url": "$URL"}],
 "cases": $CASES, "exclude-cases": $EXCLUDE, "exclude-agent-cases": {}}
JSON
status=0
started=$(date +%s)
(cd "$OUT" && timeout "$TIMEOUT_S" "$CACHE/venv/bin/wstest" -m fuzzingclient -s "$OUT/spec.json" > "$OUT/wstest.log" 2>&1) ||
    echo "autobahn.sh: wstest exit code $? (124 = timed out; no report is written then)"
echo "autobahn.sh: suite took $(( $(date +%s) - started ))s"
if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    echo "autobahn.sh: the server died during the run; last lines of its output:" >&2
    tail -20 "$SERVER_LOG" >&2
    status=1
fi

# 4. Verdict: a count by behaviour, then every FAILED or UNIMPLEMENTED case.
INDEX="$OUT/report/index.json"
if [ ! -f "$INDEX" ]; then
    echo "autobahn.sh: no report at $INDEX (suite timed out or crashed; see $OUT/wstest.log)" >&2
    exit 1
fi
"$CACHE/venv/bin/python" - "$INDEX" <<'PY' || status=1
import collections, json, sys
index = json.load(open(sys.argv[1]))
key = lambda case: tuple(int(part) for part in case.split("."))
bad = []
for agent, cases in index.items():
    counts = collections.Counter(result["behavior"] for result in cases.values())
    print(f"{agent}: {len(cases)} cases, " + ", ".join(f"{count} {name}" for name, count in sorted(counts.items())))
    for case, result in cases.items():
        if {result["behavior"], result["behaviorClose"]} & {"FAILED", "UNIMPLEMENTED"}:
            bad.append((key(case), case, result["behavior"], result["behaviorClose"]))
for _, case, behavior, close in sorted(bad):
    print(f"  {behavior}: {case} (close: {close})")
print(f"autobahn.sh: {len(bad)} case(s) FAILED or UNIMPLEMENTED")
sys.exit(1 if bad else 0)
PY
echo "autobahn.sh: report $OUT/report/index.html, server log $SERVER_LOG"
exit "$status"
