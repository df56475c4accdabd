#!/usr/bin/env python3
"""Server memory per compressed connection: opens N Python `websockets` connections to a running
server (each in a room of its own), then has each send one 1 KB compressed message, and prints
the server's RSS growth per connection after each step.

Usage: scripts/bench/deflate-memory.py PORT SERVER_PID N (ct|nct)
  ct   the clients keep their compression context (an inflater per connection on the server)
  nct  they offer client_no_context_takeover (the server shares one inflater among them)
Run it with `ulimit -n` above N, against a server started with a large enough limit too.
"""

import asyncio
import sys

from websockets.asyncio.client import connect
from websockets.extensions.permessage_deflate import ClientPerMessageDeflateFactory


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS for pid %d" % pid)


async def measure(port, pid, count, no_context_takeover):
    before = rss_kib(pid)
    offer = ClientPerMessageDeflateFactory(client_no_context_takeover=no_context_takeover, client_max_window_bits=True)
    connections = [await connect(f"ws://127.0.0.1:{port}/rooms/memory{i}?notices=0", compression=None,
                                 extensions=[offer]) for i in range(count)]
    opened = rss_kib(pid)
    for connection in connections:
        await connection.send("hello there how are you doing today " * 30)
    await asyncio.sleep(2)
    after = rss_kib(pid)
    label = "client_no_context_takeover" if no_context_takeover else "client context takeover"
    print(f"{label}: {(opened - before) / count:.1f} KiB per idle connection, "
          f"{(after - before) / count:.1f} KiB after one compressed message")
    for connection in connections:
        await connection.close()


if __name__ == "__main__":
    if len(sys.argv) != 5 or sys.argv[4] not in ("ct", "nct"):
        sys.exit(__doc__)
    asyncio.run(measure(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "nct"))
