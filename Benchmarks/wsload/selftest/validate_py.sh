#!/usr/bin/env bash
# Runs wsload against Python `websockets` relays (selftest/py_relay.py): plain, TLS, deflate
# with and without server context takeover, TLS + deflate, large (multi-record, multi-frame)
# messages. Every run must end with ok=true, zero loss, and (with --deflate) every delivered
# message compressed. Prints PASS/FAIL per case and "N passed, N failed".
# Usage: selftest/validate_py.sh [PORT]   (needs python3 with websockets, openssl)
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
WSLOAD="${WSLOAD:-$HERE/../wsload}"
PORT="${1:-19911}"
WORK="$(mktemp -d /tmp/wsload-validate.XXXXXX)"
trap 'kill "$relay" 2> /dev/null; rm -rf "$WORK"' EXIT
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$WORK/key.pem" -out "$WORK/cert.pem" \
    -days 1 -subj /CN=localhost 2> /dev/null || { echo "openssl failed"; exit 2; }
passed=0 failed=0 relay=""

start_relay() { # ARGS...
    kill "$relay" 2> /dev/null; wait "$relay" 2> /dev/null
    python3 "$HERE/py_relay.py" "$PORT" "$@" > "$WORK/relay.log" 2>&1 &
    relay=$!
    for _ in $(seq 50); do grep -q listening "$WORK/relay.log" && return; sleep 0.1; done
    echo "relay did not start: $(cat "$WORK/relay.log")"; exit 2
}

# case NAME CHECK URL ARGS... ; CHECK is a python expression over the JSON line j
case_() {
    local name="$1" check="$2" url="$3"
    shift 3
    local json
    json="$(timeout 120 "$WSLOAD" --url-template "$url" -q "$@" 2> "$WORK/err")"
    if python3 -c "import json,sys; j=json.loads(sys.argv[1]); sys.exit(0 if (j['ok'] and j['lost']==0 and ($check)) else 1)" "$json" 2> /dev/null; then
        passed=$((passed + 1)); echo "PASS $name"
    else
        failed=$((failed + 1)); echo "FAIL $name: $json $(tail -3 "$WORK/err")"
    fi
}

small=(--rooms 3 --members 4 --rate 300 --duration 2 --warmup 0.5)
start_relay
case_ "plain ws, chat text" "j['delivered']>0" "ws://127.0.0.1:$PORT/rooms/{room}" "${small[@]}" --size 512 --text chat
start_relay --tls "$WORK/cert.pem" "$WORK/key.pem"
case_ "wss TLS 1.3 (own record reader)" "j['tls']['conns']==12 and j['tls']['own_reader_conns']==12 and 'TLSv1.3' in j['tls']['negotiated']" "wss://127.0.0.1:$PORT/rooms/{room}" "${small[@]}" --size 512 --text chat
case_ "wss TLS 1.3 through SSL_read" "j['tls']['conns']==12 and j['tls']['own_reader_conns']==0" "wss://127.0.0.1:$PORT/rooms/{room}" "${small[@]}" --size 512 --text chat --tls-reader openssl
case_ "wss TLS 1.2 (SSL_read)" "'TLSv1.2' in j['tls']['negotiated'] and j['tls']['own_reader_conns']==0" "wss://127.0.0.1:$PORT/rooms/{room}" "${small[@]}" --tls-version 1.2
case_ "wss 200 KB messages (many TLS records, 64-bit lengths)" "j['delivered']>0" "wss://127.0.0.1:$PORT/rooms/{room}" \
    --rooms 2 --members 3 --rate 20 --duration 2 --warmup 0.5 --size 200000 --text chat
case_ "wss closed loop (window 8)" "j['delivered']>1000" "wss://127.0.0.1:$PORT/rooms/{room}" --rooms 2 --members 5 --rate 0 --window 8 --duration 2 --warmup 0.5
case_ "wss 2 threads" "j['delivered']>0" "wss://127.0.0.1:$PORT/rooms/{room}" "${small[@]}" --threads 2 --text chat --size 300
start_relay --deflate
d="j['deflate']['conns']==j['connections'] and j['deflate']['msgs_in_compressed']==j['delivered'] and j['deflate']['msgs_out_compressed']==j['sent'] and j['deflate']['payload_in_wire']<j['deflate']['payload_in_inflated']"
case_ "deflate, server context takeover (default offer)" "$d" "ws://127.0.0.1:$PORT/rooms/{room}" "${small[@]}" --size 512 --text chat --deflate
case_ "deflate, plain offer (client context takeover too)" "$d" "ws://127.0.0.1:$PORT/rooms/{room}" "${small[@]}" --size 512 --text chat --deflate-offer plain
case_ "deflate, 'x' padding compresses > 10x" "$d and j['deflate']['payload_in_inflated']>10*j['deflate']['payload_in_wire']" \
    "ws://127.0.0.1:$PORT/rooms/{room}" "${small[@]}" --size 512 --deflate
case_ "deflate, pooled text: publishes composed without zlib, read by Python's zlib" "$d and j['text']=='pooled' and j['deflate']['msgs_out_pooled']==j['sent']" \
    "ws://127.0.0.1:$PORT/rooms/{room}" "${small[@]}" --size 512 --text pooled --deflate
case_ "deflate, pooled text with client context takeover: deflated as usual" "$d and j['deflate']['msgs_out_pooled']==0" \
    "ws://127.0.0.1:$PORT/rooms/{room}" "${small[@]}" --size 512 --text pooled --deflate-offer plain
case_ "deflate, 200 KB messages" "$d" "ws://127.0.0.1:$PORT/rooms/{room}" --rooms 2 --members 3 --rate 20 --duration 2 --warmup 0.5 --size 200000 --text chat --deflate
start_relay --deflate --server-no-context-takeover
case_ "deflate, server_no_context_takeover (shared inflater)" "$d and 'server_no_context_takeover' in j['deflate']['answer']" \
    "ws://127.0.0.1:$PORT/rooms/{room}" "${small[@]}" --size 512 --text chat --deflate --deflate-offer both
start_relay --tls "$WORK/cert.pem" "$WORK/key.pem" --deflate
case_ "wss + deflate" "$d and j['tls']['conns']==12" "wss://127.0.0.1:$PORT/rooms/{room}" "${small[@]}" --size 512 --text chat --deflate
start_relay
json="$(timeout 60 "$WSLOAD" --url-template "ws://127.0.0.1:$PORT/rooms/{room}" -q "${small[@]}" --deflate 2> /dev/null)"
if python3 -c "import json,sys; j=json.loads(sys.argv[1]); sys.exit(0 if not j['ok'] and j['conn_failed']==12 else 1)" "$json"; then
    passed=$((passed + 1)); echo "PASS server declining deflate fails the connections"
else failed=$((failed + 1)); echo "FAIL server declining deflate: $json"; fi
case_ "server declining deflate accepted with --deflate-optional" "j['deflate']['conns']==0 and j['deflate']['msgs_in_compressed']==0 and j['delivered']>0" \
    "ws://127.0.0.1:$PORT/rooms/{room}" "${small[@]}" --deflate --deflate-optional
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
