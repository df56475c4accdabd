#!/usr/bin/env python3
"""Several event loops on this machine: M1 (100 rooms x 50 members, 64-byte messages) with the
server's `threads` setting at 1 and 2, and TLS handshakes per second with 1 and 2 loops.

Usage:
  scripts/bench/loops.py m1 SERVER_CORES RATE [THREADS...]
      Starts the server (a release build) pinned to SERVER_CORES (`taskset -c`, e.g. 1 or 0,1)
      for each THREADS value (default 1 2), runs M1 at RATE publishes/s with wsload-tls pinned
      on core 0, RUNS times (default 3), and prints medians: delivered/s, p50/p99, and the
      server's CPU time per delivery (utime + stime from /proc, over the whole run).
  scripts/bench/loops.py handshakes SERVER_CORES CLIENTS [THREADS...]
      Starts the server with TLS and runs CLIENTS `openssl s_time -new` processes (full
      handshakes, no resumption) for DURATION seconds, RUNS times; prints handshakes/s.

Environment: SWITCHBOARD_BIN [.build/release/switchboard], WSLOAD [Benchmarks/wsload/wsload]
(built by Benchmarks/wsload/build.sh), RUNS [3], DURATION [6], WARMUP [2].
Every run is bounded by `timeout`; the server is stopped after each run.
"""

import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("SWITCHBOARD_BIN", os.path.join(ROOT, ".build", "release", "switchboard"))
WSLOAD = os.environ.get("WSLOAD", os.path.join(ROOT, "Benchmarks", "wsload", "wsload"))
RUNS = int(os.environ.get("RUNS", "3"))
DURATION = int(os.environ.get("DURATION", "6"))
WARMUP = int(os.environ.get("WARMUP", "2"))
TICKS = os.sysconf("SC_CLK_TCK")


def start_server(cores, threads, data, tls=None):
    """The server pinned to `cores`; returns (process, plain port, TLS port or None)."""
    args = ["taskset", "-c", cores, BIN, "--host", "127.0.0.1", "--port", "0", "--data", data,
            "--durability", "none", "--log-level", "warning"]
    if tls:
        args += ["--tls-port", "0", "--tls-cert", tls[0], "--tls-key", tls[1]]
    environment = dict(os.environ, SWITCHBOARD_THREADS=str(threads), SWITCHBOARD_MAX_CONNECTIONS_PER_ADDRESS="0",
                       SWITCHBOARD_ROOM_MESSAGES_PER_SECOND="1000000")
    process = subprocess.Popen(["bash", "-c", 'ulimit -n 65536; exec "$@"', "server", *args],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=environment, text=True)
    ports = {}
    while len(ports) < (2 if tls else 1):
        line = process.stdout.readline()
        if not line:
            raise RuntimeError("the server exited before listening")
        if line.startswith("listening on "):
            url = line.split()[-1]
            ports[url.split(":")[0]] = int(url.rsplit(":", 1)[1])
    return process, ports["ws"], ports.get("wss")


def cpu_seconds(pid):
    """utime + stime of every thread of `pid`, in seconds."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def stop(process):
    process.send_signal(signal.SIGKILL)
    process.wait()


def m1(cores, rate, threads):
    rows = []
    for count in threads:
        runs = []
        for _ in range(RUNS):
            with tempfile.TemporaryDirectory(prefix="loops-bench-") as data:
                process, port, _ = start_server(cores, count, data)
                try:
                    before = cpu_seconds(process.pid)
                    started = time.monotonic()
                    result = subprocess.run(
                        ["timeout", str(DURATION + WARMUP + 120), "taskset", "-c", "0", WSLOAD,
                         "--url-template", f"ws://127.0.0.1:{port}/rooms/{{room}}?notices=0",
                         "--rooms", "100", "--members", "50", "--publishers-per-room", "1", "--rate", str(rate),
                         "--size", "64", "--duration", str(DURATION), "--warmup", str(WARMUP), "--bind-range", "4", "-q"],
                        capture_output=True, text=True)
                    cpu = cpu_seconds(process.pid) - before
                    elapsed = time.monotonic() - started
                finally:
                    stop(process)
            report = json.loads(result.stdout.strip().splitlines()[-1]) if result.stdout.strip() else {}
            delivered = report.get("delivered_per_s", 0.0)
            # Deliveries over the whole run (warm-up and connection set-up included), against
            # the CPU of the whole run: an upper bound per delivery, the same for every setting.
            total = delivered * (DURATION + WARMUP)
            runs.append({"delivered": delivered, "p50": report.get("latency_us", {}).get("p50", 0) / 1000,
                         "p99": report.get("latency_us", {}).get("p99", 0) / 1000, "lost": report.get("lost", -1),
                         "cpu": cpu, "elapsed": elapsed, "us_per_delivery": cpu / total * 1e6 if total else 0})
            print(f"threads {count}: {runs[-1]}", file=sys.stderr)
        median = lambda key: statistics.median(run[key] for run in runs)
        rows.append((count, median("delivered"), median("p50"), median("p99"), sum(run["lost"] for run in runs),
                     median("cpu"), median("us_per_delivery")))
    print(f"M1, {rate} publishes/s, server on cores {cores}, load on core 0, medians of {RUNS}, "
          f"load average {open('/proc/loadavg').read().split()[0]}")
    print("| threads | delivered/s | p50 ms | p99 ms | lost | server CPU s | CPU µs per delivery |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for count, delivered, p50, p99, lost, cpu, per in rows:
        print(f"| {count} | {delivered:,.0f} | {p50:.2f} | {p99:.2f} | {lost} | {cpu:.2f} | {per:.2f} |")


def handshakes(cores, clients, threads):
    folder = tempfile.mkdtemp(prefix="loops-cert-")
    subprocess.run([BIN, "cert", "--self-signed", "--out", folder], check=True, capture_output=True)
    tls = (os.path.join(folder, "cert.pem"), os.path.join(folder, "key.pem"))
    rows = []
    for count in threads:
        rates = []
        for _ in range(RUNS):
            with tempfile.TemporaryDirectory(prefix="loops-bench-") as data:
                process, _, tls_port = start_server(cores, count, data, tls)
                try:
                    before = cpu_seconds(process.pid)
                    runners = [subprocess.Popen(
                        ["timeout", str(DURATION + 30), "openssl", "s_time", "-connect", f"127.0.0.1:{tls_port}",
                         "-new", "-time", str(DURATION)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
                        for _ in range(clients)]
                    outputs = [runner.communicate()[0] for runner in runners]
                    cpu = cpu_seconds(process.pid) - before
                finally:
                    stop(process)
            total = 0
            for output in outputs:
                for line in output.splitlines():
                    if "connections in" in line and "real seconds" in line:
                        total += int(line.split()[0])
            rates.append((total / DURATION, cpu / DURATION))
            print(f"threads {count}: {rates[-1][0]:.0f} handshakes/s, server {rates[-1][1] * 100:.0f}% of a core",
                  file=sys.stderr)
        rows.append((count, statistics.median(r[0] for r in rates), statistics.median(r[1] for r in rates)))
    subprocess.run(["rm", "-rf", folder])
    print(f"TLS handshakes, {clients} s_time clients, server on cores {cores}, medians of {RUNS}, "
          f"load average {open('/proc/loadavg').read().split()[0]}")
    print("| threads | handshakes/s | server CPU (cores) |")
    print("| ---: | ---: | ---: |")
    for count, rate, cpu in rows:
        print(f"| {count} | {rate:,.0f} | {cpu:.2f} |")


def main(argv):
    if len(argv) < 4 or argv[1] not in ("m1", "handshakes"):
        print(__doc__, file=sys.stderr)
        return 2
    threads = [int(value) for value in argv[4:]] or [1, 2]
    if argv[1] == "m1":
        m1(argv[2], int(argv[3]), threads)
    else:
        handshakes(argv[2], int(argv[3]), threads)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
