#!/usr/bin/env python3
"""Measures the cost of one fsync of an appended ~200-byte line, as the journal does it.

Usage: scripts/bench/fsync-cost.py [DIR] [COUNT] [BYTES]   (default: /tmp, 500, 200)

Opens a fresh file in DIR with O_APPEND, then COUNT times writes one line of BYTES bytes and
calls fsync (and, separately, fdatasync) on it, timing each call with CLOCK_MONOTONIC. Prints the
median, mean, p90, p99 and max in milliseconds as one JSON line, and the implied ceiling of a server
that fsyncs once per message (1000 / mean). Then the same write and fdatasync into space the
file already has, which spares the file system a commit of the file's new size: a file
zero-filled (written and synced) beforehand, and one given its blocks by `posix_fallocate`
(BENCHMARKS.md, "A node's own entries from Redis's answer"). Each measure also gives the
process's CPU time per write and sync (from clock ticks of 10 ms: use a COUNT of thousands).
"""
import json
import os
import statistics
import sys
import tempfile
import time


def line_of(size):
    line = (b'{"op":"set","path":["Messages","-NxYzAbCdEfGhIjKlMnO","-NxYzAbCdEfGhIjKlMnP"],'
            b'"value":{"createdAt":1763827200000,"message":"hello' + b"x" * max(0, size) + b'","user":"-NxYzAbCdEfGhIjKlMnQ"}}\n')
    return line[:size - 1] + b"\n"


def measure(directory, count, sync, size, space=None):
    """Times `sync` after each of `count` writes of `size` bytes: appended (space None), or
    written from the start of a file given its blocks first ("zeroed" or "allocated")."""
    fd, path = tempfile.mkstemp(prefix="fsync-cost-", suffix=".jsonl", dir=directory)
    os.close(fd)
    line = line_of(size)
    fd = os.open(path, os.O_WRONLY | (os.O_APPEND if space is None else 0))
    samples = []
    try:
        if space == "zeroed":
            os.write(fd, bytes(count * size))
            os.fsync(fd)
            os.lseek(fd, 0, os.SEEK_SET)
        elif space == "allocated":
            os.posix_fallocate(fd, 0, count * size)
            os.fsync(fd)
        cpu = os.times()
        for _ in range(count):
            os.write(fd, line)
            start = time.monotonic_ns()
            sync(fd)
            samples.append((time.monotonic_ns() - start) / 1e6)
        after = os.times()
    finally:
        os.close(fd)
        os.unlink(path)
    cpu_us = (after.user - cpu.user + after.system - cpu.system) / count * 1e6
    samples.sort()
    pick = lambda q: samples[min(len(samples) - 1, int(q * len(samples)))]
    return {"median_ms": round(statistics.median(samples), 3), "mean_ms": round(statistics.mean(samples), 3),"p90_ms": round(pick(0.9), 3),
            "p99_ms": round(pick(0.99), 3), "max_ms": round(samples[-1], 3),
            "per_message_ceiling_per_s": round(1000 / statistics.mean(samples)), "cpu_us_per_write": round(cpu_us, 1)}


def main():
    directory = sys.argv[1] if len(sys.argv) > 1 else "/tmp"
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 500
    size = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    result = {"tool": "fsync-cost", "dir": directory, "count": count, "line_bytes": size,
              "fsync": measure(directory, count, os.fsync, size),
              "fdatasync": measure(directory, count, os.fdatasync, size),
              "fdatasync_into_zeroed": measure(directory, count, os.fdatasync, size, "zeroed"),
              "fdatasync_into_allocated": measure(directory, count, os.fdatasync, size, "allocated")}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
