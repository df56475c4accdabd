#!/usr/bin/env python3
"""Measures the cost of one fsync of an appended ~200-byte line, as the journal does it.

Usage: scripts/bench/fsync-cost.py [DIR] [COUNT]   (default: /tmp, 500)

Opens a fresh file in DIR with O_APPEND, then COUNT times writes one 200-byte line and calls
fsync (and, separately, fdatasync) on it, timing each call with CLOCK_MONOTONIC. Prints the
median, mean, p90, p99 and max in milliseconds as one JSON line, and the implied ceiling of a server
that fsyncs once per message (1000 / mean).
"""
import json
import os
import statistics
import sys
import tempfile
import time


def measure(directory, count, sync):
    fd, path = tempfile.mkstemp(prefix="fsync-cost-", suffix=".jsonl", dir=directory)
    os.close(fd)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    line = (b'{"op":"set","path":["Messages","-NxYzAbCdEfGhIjKlMnO","-NxYzAbCdEfGhIjKlMnP"],'
            b'"value":{"createdAt":1763827200000,"message":"hello")' + b"x" * 40 + b'","user":"-NxYzAbCdEfGhIjKlMnQ"}}\n')
    line = line[:199] + b"\n"
    samples = []
    try:
        for _ in range(count):
            os.write(fd, line)
            start = time.monotonic_ns()
            sync(fd)
            samples.append((time.monotonic_ns() - start) / 1e6)
    finally:
        os.close(fd)
        os.unlink(path)
    samples.sort()
    pick = lambda q: samples[min(len(samples) - 1, int(q * len(samples)))]
    return {"median_ms": round(statistics.median(samples), 3), "mean_ms": round(statistics.mean(samples), 3),"p90_ms": round(pick(0.9), 3),
            "p99_ms": round(pick(0.99), 3), "max_ms": round(samples[-1], 3),
            "per_message_ceiling_per_s": round(1000 / statistics.mean(samples))}


def main():
    directory = sys.argv[1] if len(sys.argv) > 1 else "/tmp"
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 500
    result = {"tool": "fsync-cost", "dir": directory, "count": count, "line_bytes": 200,
              "fsync": measure(directory, count, os.fsync),
              "fdatasync": measure(directory, count, os.fdatasync)}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
