# Shared pieces of m1-tls.sh and m3-tls.sh: the M1/M3 rate stepping of lib.sh (same table, same
# verdicts, same pinning) run with wsload-tls, so the workload can be sent over wss:// and with
# permessage-deflate, with 512-byte chat-like text by default.
#
# MODE picks the transport and compression of every run:
#   plain        ws://,  no compression offered      (the baseline)
#   tls          wss://, no compression offered
#   deflate      ws://,  --deflate (permessage-deflate offered; a server that declines fails the run)
#   tls-deflate  wss://, --deflate
#
# Environment knobs on top of lib.sh's (DURATION, WARMUP, RUNS, SLO_MS, STRICT_MS, RATE_UNIT,
# BIND_RANGE, URL_QUERY, CLIENT_CORE, OUT_DIR):
#   WSLOAD [Benchmarks/wsload-tls/wsload-tls]   build it with Benchmarks/wsload-tls/build.sh
#   SIZE [512]  TEXT [chat]                     payload bytes and padding (chat words or x)
#   DEFLATE_OFFER [client]                      wsload-tls --deflate-offer (client, plain, both, literal)
#   CONNECT_TIMEOUT [60]                        per-connection connect + TLS + upgrade timeout (not measured)
#   BENCH_LIB [this folder]                     where lib.sh and wsload_table.py live

TLS_BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BENCH_LIB="${BENCH_LIB:-$TLS_BENCH_DIR}"
if [ ! -r "$BENCH_LIB/lib.sh" ] || [ ! -r "$BENCH_LIB/wsload_table.py" ]; then
    echo "bench: lib.sh and wsload_table.py (the M1/M3 bench helpers) not found in $BENCH_LIB; set BENCH_LIB" >&2
    exit 2
fi
WSLOAD="${WSLOAD:-$TLS_BENCH_DIR/../../Benchmarks/wsload-tls/wsload-tls}"
SIZE="${SIZE:-512}"
TEXT="${TEXT:-chat}"
DEFLATE_OFFER="${DEFLATE_OFFER:-client}"
CONNECT_TIMEOUT="${CONNECT_TIMEOUT:-60}"
TLS_DEFAULT_RATES="500 1000 2000 5000 10000 20000 50000 100000 150000 200000 300000 400000 500000 600000 800000"
# shellcheck source=/dev/null
. "$BENCH_LIB/lib.sh"

# Sets SCHEME and MODE_ARGS for MODE, or exits with a usage error.
tls_mode() {
    MODE_ARGS=(--text "$TEXT")
    case "$1" in
        plain) SCHEME=ws ;;
        tls) SCHEME=wss ;;
        deflate) SCHEME=ws; MODE_ARGS+=(--deflate --deflate-offer "$DEFLATE_OFFER") ;;
        tls-deflate) SCHEME=wss; MODE_ARGS+=(--deflate --deflate-offer "$DEFLATE_OFFER") ;;
        *) echo "bench: MODE must be plain, tls, deflate or tls-deflate, got '$1'" >&2; exit 2 ;;
    esac
}

# lib.sh's bench_step with the mode's scheme and wsload-tls options; the table is named NAME-MODE.
# Usage: tls_bench_step NAME MODE PORT ROOMS MEMBERS RATES...
tls_bench_step() {
    local name="$1" mode="$2" port="$3" rooms="$4" members="$5"
    shift 5
    tls_mode "$mode"
    WSLOAD_ARGS=(--connect-timeout "$CONNECT_TIMEOUT" "${MODE_ARGS[@]}")
    echo "bench $name ($mode): ${SIZE}-byte $TEXT text" >&2
    # shellcheck disable=SC2086 # the default list is meant to split into rates
    [ $# -gt 0 ] || set -- $TLS_DEFAULT_RATES
    bench_step "$name-$mode" "$port" "$rooms" "$members" "$@"
}
