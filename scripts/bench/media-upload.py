#!/usr/bin/env python3
"""Upload load for `scripts/bench/run media`: CLIENTS threads, each signed up as its own user,
POST images of SIZE bytes to /api/v1/media back to back on one keep-alive connection for
WARMUP + DURATION seconds, and one JSON line with what the measured part achieved: uploads/s,
MiB/s, the answer latency (p50, p99, max, in ms) and any failures. Loopback only; stops by itself.

Usage: media-upload.py PORT [--clients 8] [--size 102400] [--duration 10] [--warmup 2]
"""

import argparse
import http.client
import json
import os
import statistics
import threading
import time
import uuid

import websockets.sync.client

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def sign_up(port, index):
    with websockets.sync.client.connect(f"ws://127.0.0.1:{port}/ws", open_timeout=60) as ws:
        ws.send(json.dumps({"op": "signup", "id": 1, "email": f"bench-{index}-{uuid.uuid4().hex[:8]}@example.test",
                            "password": "benchmark password", "name": f"bench{index}"}))
        reply = json.loads(ws.recv(timeout=60))
        if reply.get("op") != "ok":
            raise SystemExit(f"signup failed: {reply}")
        return reply["token"]


def uploader(port, token, body, start, measure_from, stop_at, results):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "image/png"}
    latencies, failures, count = [], 0, 0
    while time.monotonic() < start:
        time.sleep(0.001)
    while (now := time.monotonic()) < stop_at:
        try:
            connection.request("POST", "/api/v1/media", body=body, headers=headers)
            response = connection.getresponse()
            response.read()
            ok = response.status == 201
            if response.getheader("Connection", "").lower() == "close":
                connection.close()
        except (OSError, http.client.HTTPException):
            ok = False
            connection.close()
        done = time.monotonic()
        if now >= measure_from and done <= stop_at:
            if ok:
                count += 1
                latencies.append(done - now)
            else:
                failures += 1
    connection.close()
    results.append((count, failures, latencies))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--size", type=int, default=100 * 1024)
    parser.add_argument("--duration", type=float, default=10)
    parser.add_argument("--warmup", type=float, default=2)
    args = parser.parse_args()
    tokens = [sign_up(args.port, index) for index in range(args.clients)]
    body = PNG_SIGNATURE + os.urandom(args.size - len(PNG_SIGNATURE))
    start = time.monotonic() + 0.2
    measure_from, stop_at = start + args.warmup, start + args.warmup + args.duration
    results = []
    threads = [threading.Thread(target=uploader, args=(args.port, token, body, start, measure_from, stop_at, results))
               for token in tokens]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=args.warmup + args.duration + 120)
    uploads = sum(r[0] for r in results)
    latencies = sorted(l for r in results for l in r[2])

    def percentile(p):
        return round(1000 * latencies[min(len(latencies) - 1, int(p * len(latencies)))], 2) if latencies else None

    print(json.dumps({
        "ok": len(results) == args.clients and sum(r[1] for r in results) == 0,
        "clients": args.clients, "size": args.size, "uploads": uploads,
        "failures": sum(r[1] for r in results),
        "uploads_per_s": round(uploads / args.duration, 1),
        "mib_per_s": round(uploads * args.size / args.duration / 2 ** 20, 2),
        "latency_ms": {"p50": round(1000 * statistics.median(latencies), 2) if latencies else None,
                       "p99": percentile(0.99), "max": round(1000 * latencies[-1], 2) if latencies else None},
    }, separators=(",", ":")))


if __name__ == "__main__":
    main()
