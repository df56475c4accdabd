#!/usr/bin/env python3
"""What a running server's store and threads do over time: a row every INTERVAL seconds with the
journaled mutations per second, mutations per fsync, batches held back while checkpoints lag
(docs/durability.md), the journal's size, each thread's CPU time per mutation (its `schedstat`,
by thread name: the event loop carries the binary's name) and each thread's page faults.

A benchmark's median hides a cycle: this shows, for example, each checkpoint's replay, write
and the seconds in which batches are held back (BENCHMARKS.md, "A noisy day, and one checkpoint
cycle second by second").

Usage: scripts/bench/timeline.py PID PORT [SECONDS] [INTERVAL]
    PID and PORT of a running server (its plain port, for /metrics); runs for SECONDS (default:
    until interrupted, or "inf"), a row every INTERVAL seconds (0.5), then a last row for the
    whole run with the mutations it counted.
"""

import os
import re
import sys
import time
import urllib.request

COUNTERS = {
    "mutations": "switchboard_store_mutations_total",
    "fsyncs": "switchboard_store_fsyncs_total",
    "held": "switchboard_store_batches_held_back_total",
    "journal": "switchboard_store_journal_bytes",
}


def threads(pid):
    """Per thread name: nanoseconds on a CPU and minor page faults, summed over same-named threads."""
    found = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = f.read().strip()
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                cpu = int(f.read().split()[0])
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                faults = int(f.read().rsplit(")", 1)[1].split()[7])
        except (FileNotFoundError, ProcessLookupError):
            continue
        cpu0, faults0 = found.get(name, (0, 0))
        found[name] = (cpu0 + cpu, faults0 + faults)
    return found


def metrics(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    values = {}
    for key, family in COUNTERS.items():
        match = re.search(rf"^{family} (\S+)$", text, re.M)
        if not match:
            raise SystemExit(f"timeline: /metrics has no {family}")
        values[key] = float(match.group(1))
    return values


def sample(pid, port):
    return time.monotonic(), metrics(port), threads(pid)


def row(label, before, after, total=False):
    (s0, m0, t0), (s1, m1, t1) = before, after
    seconds = s1 - s0
    mutations = m1["mutations"] - m0["mutations"]
    fields = [label, f"{mutations / seconds:8.0f}/s"] + ([f"{mutations:.0f} mutations"] if total else []) + [
        f"per fsync {mutations / max(1, m1['fsyncs'] - m0['fsyncs']):5.1f}",
        f"held {m1['held'] - m0['held']:4.0f}", f"journal {m1['journal'] / 1e6:5.1f} MB"]
    if mutations > 0:
        busy = {name: (cpu - t0.get(name, (0, 0))[0]) / mutations / 1000 for name, (cpu, _) in t1.items()}
        fields.append("CPU µs per mutation: " + ", ".join(
            f"{name} {us:.2f}" for name, us in sorted(busy.items()) if us >= 0.005))
    faults = [f"{name} {count - t0.get(name, (0, 0))[1]}" for name, (_, count) in sorted(t1.items())
              if count > t0.get(name, (0, 0))[1]]
    if faults:
        fields.append("faults: " + ", ".join(faults))
    print("  ".join(fields), flush=True)


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    pid, port = int(sys.argv[1]), int(sys.argv[2])
    seconds = float(sys.argv[3]) if len(sys.argv) > 3 else float("inf")
    interval = float(sys.argv[4]) if len(sys.argv) > 4 else 0.5
    first = last = sample(pid, port)
    try:
        while last[0] - first[0] < seconds:
            time.sleep(max(0.0, min(interval, seconds - (last[0] - first[0]))))
            now = sample(pid, port)
            row(f"{now[0] - first[0]:6.1f} s", last, now)
            last = now
    except KeyboardInterrupt:
        pass
    end = sample(pid, port)
    row(f"whole run ({end[0] - first[0]:.1f} s)", first, end, total=True)


if __name__ == "__main__":
    main()
