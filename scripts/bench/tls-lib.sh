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

# lib.sh's bench_step with the scheme and the mode's wsload-tls options; also writes the exact
# command line of the first run to OUT_DIR/command.txt.
# Usage: tls_bench_step NAME MODE PORT ROOMS MEMBERS RATES...
tls_bench_step() {
    local name="$1" mode="$2" port="$3" rooms="$4" members="$5"
    shift 5
    tls_mode "$mode"
    local rates=("$@")
    [ ${#rates[@]} -gt 0 ] || read -r -a rates <<< "$TLS_DEFAULT_RATES"
    local url="$SCHEME://127.0.0.1:$port/rooms/{room}?$URL_QUERY"
    local results="$OUT_DIR/results.jsonl"
    : > "$results"
    echo "bench $name ($mode): $rooms rooms x $members members, 1 publisher/room, ${SIZE}-byte $TEXT text, ${DURATION}s (+${WARMUP}s warmup), $RUNS runs/rate, rates in $RATE_UNIT/s" >&2
    local rate pubs target run json previous=""
    for rate in "${rates[@]}"; do
        read -r pubs target <<< "$(python3 "$BENCH_DIR/wsload_table.py" pubrate "$rate" "$RATE_UNIT" "$rooms" "$members")"
        [ "$pubs" != "$previous" ] || continue
        previous="$pubs"
        local args=(--url-template "$url" --rooms "$rooms" --members "$members" --publishers-per-room 1
            --rate "$pubs" --size "$SIZE" --duration "$DURATION" --warmup "$WARMUP" --bind-range "$BIND_RANGE"
            --connect-timeout "$CONNECT_TIMEOUT" -q "${MODE_ARGS[@]}")
        [ -s "$OUT_DIR/command.txt" ] || echo "taskset -c $CLIENT_CORE $WSLOAD ${args[*]}" > "$OUT_DIR/command.txt"
        for run in $(seq "$RUNS"); do
            json="$(bench_wsload "$OUT_DIR/wsload-$target-$run.log" "${args[@]}")"
            [ -n "$json" ] || json='{"tool":"wsload","ok":false,"missing":true}'
            printf '{"target":%s,"pub_rate":%s,"run":%s,"wsload":%s}\n' "$target" "$pubs" "$run" "$json" >> "$results"
            python3 "$BENCH_DIR/wsload_table.py" line "$results" >&2
            sleep 1
        done
        if ! python3 "$BENCH_DIR/wsload_table.py" passes "$results" "$target" "$SLO_MS"; then
            echo "bench $name ($mode): rate $target/s failed (loss, errors or median p99 > ${SLO_MS} ms); stopping" >&2
            break
        fi
    done
    echo "command (first rate): $(cat "$OUT_DIR/command.txt")" >&2
    python3 "$BENCH_DIR/wsload_table.py" table "$results" "$SLO_MS" "$STRICT_MS" "$name-$mode" | tee "$OUT_DIR/table.txt"
}
