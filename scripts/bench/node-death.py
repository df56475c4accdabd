#!/usr/bin/env python3
"""How long a killed node's members stay in the cluster's rooms (docs/cluster.md, "Nodes that
die"): a redis-server and two nodes (BIN, release build by default) on the default nodeTimeout
(or NODE_TIMEOUT seconds), a member of one room on each; the second node gets SIGKILL and the
time until the first node's member reads `* b left (1 online)` is printed. RUNS [3] runs.

Usage: scripts/bench/node-death.py   (needs redis-server and the websockets package)
"""

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

import websockets.sync.client

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("BIN", os.path.join(ROOT, ".build", "release", "switchboard"))
RUNS = int(os.environ.get("RUNS", "3"))
PATIENCE = 120


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_node(folder, name, redis_port, env):
    process = subprocess.Popen(
        [BIN, "--host", "127.0.0.1", "--port", "0", "--data", os.path.join(folder, name),
         "--redis", f"redis://127.0.0.1:{redis_port}", "--log-level", "error"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    port = int(re.search(r":(\d+)$", process.stdout.readline().strip()).group(1))
    deadline = time.monotonic() + PATIENCE
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=PATIENCE) as answer:
                if answer.status == 200:
                    return process, port
        except OSError:
            pass
        if time.monotonic() > deadline:
            sys.exit(f"node {name} never became ready")
        time.sleep(0.05)


def until(member, text):
    while member.recv(timeout=PATIENCE) != text:
        pass


def run_once():
    folder = tempfile.mkdtemp(prefix="bench-node-death-")
    redis_port = free_port()
    redis = subprocess.Popen(["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
                              "--appendonly", "no", "--dir", folder], stdout=subprocess.PIPE, text=True)
    nodes = []
    try:
        for line in redis.stdout:
            if "Ready to accept connections" in line:
                break
        env = dict(os.environ)
        if "NODE_TIMEOUT" in os.environ:
            env["SWITCHBOARD_NODE_TIMEOUT"] = os.environ["NODE_TIMEOUT"]
        nodes = [start_node(folder, name, redis_port, env) for name in ("a", "b")]
        with websockets.sync.client.connect(f"ws://127.0.0.1:{nodes[0][1]}/rooms/hall?name=a") as first, \
                websockets.sync.client.connect(f"ws://127.0.0.1:{nodes[1][1]}/rooms/hall?name=b") as second:
            until(first, "* b joined (2 online)")
            until(second, "* b joined (2 online)")
            killed = time.monotonic()
            nodes[1][0].send_signal(signal.SIGKILL)
            until(first, "* b left (1 online)")
            return time.monotonic() - killed
    finally:
        for process, _ in nodes:
            process.kill()
            process.wait()
        redis.kill()
        redis.wait()
        shutil.rmtree(folder, ignore_errors=True)


def main():
    times = [run_once() for _ in range(RUNS)]
    print("seconds from SIGKILL to the left notice:", ", ".join(f"{t:.2f}" for t in times),
          f"(nodeTimeout {os.environ.get('NODE_TIMEOUT', '10 (default)')}, load average {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
