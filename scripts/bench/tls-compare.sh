#!/usr/bin/env bash
# Issue 3's comparison in one run: M1 and M3 with 512-byte chat text, plain (the baseline), over
# wss:// and with permessage-deflate, against Switchboard and the Hummingbird peer (NIOSSL, its
# WSCompression). Each case restarts its server pinned on SERVER_CORE (default 1) and runs
# m1-tls.sh / m3-tls.sh on CLIENT_CORE (default 0); the tables and a summary go to OUT_ROOT.
#
# Usage: scripts/bench/tls-compare.sh SWITCHBOARD_BIN HUMMINGBIRD_BIN [CASE...]
#   CASE   server:bench:mode[:rates], e.g. sb:m1:tls or hb:m3:deflate:1000,2000,5000
#          (default: every server x {m1,m3} x {plain,tls,deflate} with the rate lists below)
# Environment: SB_CONFIG [Config/switchboard.json] SB_PORT [9401] SB_TLS_PORT [9402] HB_PORT [9411]
#   CERT_DIR (a self-signed localhost certificate is made with openssl when unset), OUT_ROOT,
#   QUIET_LOAD [2] QUIET_WAIT [0]: before each case wait up to QUIET_WAIT s for a 1-minute load
#   average below QUIET_LOAD (the machine is shared; the load is logged with every case),
#   DEFLATE_OFFER [both: both sides reset their compressor per message], and the knobs of
#   tls-lib.sh / lib.sh (DURATION, WARMUP, RUNS, SIZE, TEXT, BENCH_LIB, WSLOAD).
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
SB="$1"
HB="$2"
shift 2
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
SB_CONFIG="${SB_CONFIG:-$REPO/Config/switchboard.json}"
SB_PORT="${SB_PORT:-9401}"
SB_TLS_PORT="${SB_TLS_PORT:-9402}"
HB_PORT="${HB_PORT:-9411}"
SERVER_CORE="${SERVER_CORE:-1}"
OUT_ROOT="${OUT_ROOT:-/tmp/bench-tls-compare-$(date +%Y%m%d-%H%M%S)}"
export DEFLATE_OFFER="${DEFLATE_OFFER:-both}"
mkdir -p "$OUT_ROOT"
if [ -z "${CERT_DIR:-}" ]; then
    CERT_DIR="$OUT_ROOT/cert"
    mkdir -p "$CERT_DIR"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$CERT_DIR/key.pem" \
        -out "$CERT_DIR/cert.pem" -days 30 -subj /CN=localhost -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" 2> /dev/null
fi
# Rates (target deliveries/s) per server and mode: each list starts where the server is known to
# pass and stops at the first failing step anyway.
SB_RATES="20000,50000,100000,150000,200000,300000,400000,500000,600000,800000"
SB_TLS_RATES="2000,5000,10000,20000,50000,100000,150000,200000,300000,400000,500000"
HB_RATES="1000,2000,5000,10000,20000,50000"
if [ $# -eq 0 ]; then
    set -- sb:m1:plain sb:m1:tls sb:m1:deflate sb:m3:plain sb:m3:tls sb:m3:deflate \
        hb:m1:plain hb:m1:tls hb:m1:deflate hb:m3:plain hb:m3:tls hb:m3:deflate
fi

server_pid=""
stop_server() {
    [ -n "$server_pid" ] || return 0
    kill "$server_pid" 2> /dev/null || true
    wait "$server_pid" 2> /dev/null || true
    server_pid=""
}
trap stop_server EXIT

# start_server sb|hb MODE LOG: runs the server pinned in the background, waits for its listening line.
start_server() {
    local which="$1" mode="$2" log="$3" data
    ulimit -n 20000 2> /dev/null || ulimit -n "$(ulimit -Hn)"
    if [ "$which" = sb ]; then
        data="$OUT_ROOT/sb-data"
        rm -rf "$data" && mkdir -p "$data"
        taskset -c "$SERVER_CORE" "$SB" serve --config "$SB_CONFIG" --host 127.0.0.1 --port "$SB_PORT" --tls-port "$SB_TLS_PORT" \
            --tls-cert "$CERT_DIR/cert.pem" --tls-key "$CERT_DIR/key.pem" --data "$data" --durability none --log-level error > "$log" 2>&1 &
    else
        local extra=()
        case "$mode" in tls*) extra+=(--tls-cert "$CERT_DIR/cert.pem" --tls-key "$CERT_DIR/key.pem") ;; esac
        case "$mode" in *deflate) extra+=(--deflate) ;; esac
        taskset -c "$SERVER_CORE" "$HB" "$HB_PORT" --host 127.0.0.1 "${extra[@]}" > "$log" 2>&1 &
    fi
    server_pid=$!
    for _ in $(seq 100); do
        grep -q "listening" "$log" 2> /dev/null && { sleep 0.5; return 0; }
        kill -0 "$server_pid" 2> /dev/null || break
        sleep 0.1
    done
    echo "tls-compare: $which did not start: $(tail -3 "$log")" >&2
    exit 1
}

# Waits (bounded) for the machine to calm down: other people's builds skew both cores.
wait_quiet() {
    local waited=0
    while [ "$waited" -lt "${QUIET_WAIT:-0}" ] && python3 -c "import sys; sys.exit(0 if float(open('/proc/loadavg').read().split()[0]) > float(sys.argv[1]) else 1)" "${QUIET_LOAD:-2}"; do
        sleep 10
        waited=$((waited + 10))
    done
}

summary="$OUT_ROOT/summary.txt"
for case_ in "$@"; do
    IFS=: read -r which bench mode rates <<< "$case_"
    if [ -z "$rates" ]; then
        if [ "$which" = hb ]; then rates="$HB_RATES"; elif [ "$mode" = plain ] || [ "$mode" = deflate ]; then rates="$SB_RATES"; else rates="$SB_TLS_RATES"; fi
    fi
    port="$HB_PORT"
    if [ "$which" = sb ]; then case "$mode" in tls*) port="$SB_TLS_PORT" ;; *) port="$SB_PORT" ;; esac; fi
    dir="$OUT_ROOT/$which-$bench-$mode"
    mkdir -p "$dir"
    wait_quiet
    echo "==== $which $bench $mode (load average $(cut -d' ' -f1-3 /proc/loadavg))" | tee -a "$summary"
    start_server "$which" "$mode" "$dir/server.log"
    # shellcheck disable=SC2086
    OUT_DIR="$dir" "$HERE/$bench-tls.sh" "$mode" "$port" ${rates//,/ } > "$dir/stdout.txt" 2> "$dir/stderr.txt" || true
    stop_server
    { cat "$dir/table.txt" 2> /dev/null || echo "(no table: see $dir/stderr.txt)"; echo "command: $(cat "$dir/command.txt" 2> /dev/null)"; } | tee -a "$summary"
    sleep 2
done
echo "tls-compare: summary in $summary" >&2
