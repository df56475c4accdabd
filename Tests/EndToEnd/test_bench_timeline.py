"""scripts/bench/timeline.py, the benchmark diagnostic that samples a running server's store
counters and thread CPU times: against a real server, its rows count the durable sends made
while it ran, and its last row gives their CPU time per mutation by thread."""

import os
import re
import signal
import subprocess
import sys

from chat_client import group_with, send_many, signup
from conftest import PATIENCE, ROOT

TIMELINE = os.path.join(ROOT, "scripts", "bench", "timeline.py")


def test_the_timeline_counts_the_sends_made_while_it_runs(start_server):
    server = start_server()
    client, _, _ = signup(server, "Timed")
    group = group_with(client)
    timeline = subprocess.Popen([sys.executable, TIMELINE, str(server.process.pid), str(server.port), "inf", "0.1"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # A first row: it has sampled once and runs its loop.
        first = timeline.stdout.readline()
        assert re.match(r"\s*[\d.]+ s\s+\d+/s  per fsync", first), first + timeline.stderr.read()
        send_many(client, group, [f"timed {n}" for n in range(25)])
        timeline.send_signal(signal.SIGINT)
        rest, errors = timeline.communicate(timeout=PATIENCE)
    finally:
        timeline.kill()
    assert timeline.returncode == 0, errors
    last = rest.strip().splitlines()[-1]
    assert last.startswith("whole run"), rest
    # Each acknowledged send is one journaled mutation; nothing else ran in that time.
    assert int(re.search(r"(\d+) mutations", last).group(1)) == 25, last
    # The event loop's thread carries the binary's name and did the sends' work.
    loop = re.search(r"CPU µs per mutation: .*\bswitchboard (\d+\.\d+)", last)
    assert loop and float(loop.group(1)) > 0, last
