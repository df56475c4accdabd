#!/usr/bin/env python3
"""Catch-up of a new cluster node (BENCHMARKS.md, "Cluster mode"; docs/cluster.md, "One history").

    scripts/bench/cluster-catchup.py [MESSAGES] [RUNS]      (default 1000000 3)

Starts a redis-server (no persistence) on SERVER_CPU [1], fills the cluster's journal with one
user, GROUPS [100] groups and MESSAGES messages of 64 characters, PER_ENTRY [1] messages per
journal entry (1: the most entries a node can meet for that many messages; under load a node
writes a loop iteration's changes, 20 to 60 at 64 durable senders, per entry), through
`redis-cli --pipe`. Then, RUNS times, starts a node (BIN
[.build/release/switchboard]) on an empty data folder, pinned to SERVER_CPU as well, and measures
the seconds from its start to `/readyz` answering 200: it has read and applied the whole journal.
Each run checks the node's `switchboard_messages_stored` and prints one JSON line; the median
comes last.
"""

import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("BIN", os.path.join(ROOT, ".build", "release", "switchboard"))
SERVER_CPU = os.environ.get("SERVER_CPU", "1")
GROUPS = int(os.environ.get("GROUPS", "100"))
PER_ENTRY = int(os.environ.get("PER_ENTRY", "1"))
STREAM = b"switchboard:journal"


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def command(*arguments):
    """One command in RESP, as redis-cli --pipe takes it."""
    out = [b"*%d\r\n" % len(arguments)]
    for argument in arguments:
        out.append(b"$%d\r\n%s\r\n" % (len(argument), argument))
    return b"".join(out)


def journal(messages):
    """The journal's entries: the user, the groups, then the messages round robin."""
    created = 1_700_000_000_000
    user = b'{"op":"set","path":["Users","bench"],"value":{"createdAt":%d,"groupList":{},"name":"Bench"}}\n' % created
    yield command(b"XADD", STREAM, b"*", b"o", b"bench/0", b"t", b"1", b"m", user)
    for group in range(GROUPS):
        line = (b'{"op":"set","path":["Groups","g%03d"],"value":{"createdAt":%d,"createdBy":"bench","invite":"i%03d",'
                b'"name":"group %d","userList":{"bench":true}}}\n' % (group, created, group, group))
        yield command(b"XADD", STREAM, b"*", b"o", b"bench/0", b"t", b"2", b"m", line)
    text = b"x" * 64
    for first in range(0, messages, PER_ENTRY):
        lines = b"".join(
            b'{"op":"set","path":["Messages","g%03d","-M%018d"],"value":{"createdAt":%d,"message":"%s",'
            b'"user":"bench"}}\n' % (number % GROUPS, number, created + number, text)
            for number in range(first, min(first + PER_ENTRY, messages)))
        yield command(b"XADD", STREAM, b"*", b"o", b"bench/0", b"t", b"%d" % (first + 3), b"m", lines)


def fill(port, messages):
    pipe = subprocess.Popen(["redis-cli", "-p", str(port), "--pipe"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    batch = []
    for entry in journal(messages):
        batch.append(entry)
        if len(batch) == 10000:
            pipe.stdin.write(b"".join(batch))
            batch = []
    pipe.stdin.write(b"".join(batch))
    pipe.stdin.close()
    output = pipe.stdout.read().decode()
    if pipe.wait() != 0 or "errors: 0" not in output:
        sys.exit(f"cluster-catchup: filling the journal failed: {output}")


def status(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, ""
    except OSError:
        return None, ""


def run(port, messages, number):
    data = tempfile.mkdtemp(prefix="bench-catchup-")
    http = free_port()
    started = time.monotonic()
    node = subprocess.Popen(
        ["taskset", "-c", SERVER_CPU, BIN, "serve", "--host", "127.0.0.1", "--port", str(http), "--data", data,
         "--redis", f"redis://127.0.0.1:{port}", "--log-level", "error"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = started + 300
        while status(f"http://127.0.0.1:{http}/readyz")[0] != 200:
            if time.monotonic() > deadline or node.poll() is not None:
                sys.exit("cluster-catchup: the node never became ready")
            time.sleep(0.01)
        seconds = time.monotonic() - started
        metrics = status(f"http://127.0.0.1:{http}/metrics")[1]
        stored = next(int(float(line.split()[-1])) for line in metrics.splitlines()
                      if line.startswith("switchboard_messages_stored "))
        line = {"run": number, "messages": messages, "entries": -(-messages // PER_ENTRY) + GROUPS + 1,
                "ready_s": round(seconds, 3), "stored": stored, "ok": stored == messages}
        print(json.dumps(line), flush=True)
        return line
    finally:
        node.terminate()
        node.wait()
        subprocess.run(["rm", "-rf", data], check=False)


def main():
    messages = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    if not os.access(BIN, os.X_OK):
        sys.exit(f"cluster-catchup: no server binary at {BIN} (swift build -c release --static-swift-stdlib --product switchboard)")
    folder = tempfile.mkdtemp(prefix="bench-catchup-redis-")
    port = free_port()
    redis = subprocess.Popen(
        ["taskset", "-c", SERVER_CPU, "redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", folder], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True).stdout.strip() != b"PONG":
            time.sleep(0.05)
        filled = time.monotonic()
        fill(port, messages)
        print(f"# journal of {messages} messages written in {time.monotonic() - filled:.1f} s", file=sys.stderr)
        results = [run(port, messages, number) for number in range(1, runs + 1)]
        print(json.dumps({"median_ready_s": statistics.median(r["ready_s"] for r in results),
                          "all_ok": all(r["ok"] for r in results)}))
    finally:
        redis.terminate()
        redis.wait()
        subprocess.run(["rm", "-rf", folder], check=False)


if __name__ == "__main__":
    main()
