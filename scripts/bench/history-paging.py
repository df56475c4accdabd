#!/usr/bin/env python3
"""Deep-history paging latency on /ws: `history` pages from the oldest 10% of each group.

Usage: scripts/bench/history-paging.py --url ws://127.0.0.1:PORT/ws --deep N [--duration 30]
                                       [--groups 50] [--limit 50] [--email user0@example.com]

Logs in as a user of a folder made by make-store.py (every user's password is password123), takes
up to --groups of that user's groups, and for each walks forward from the group's first message
(`history after "-"`; push ids all sort after "-") to collect the ids of its oldest N messages
(N = a tenth of a group: 1000 for 10,000,000 messages in 1,000 groups). Then, for
--duration seconds, one request at a time: a random group, `history before <random id from that
set> limit --limit`. Latency is request written -> reply read, on this one connection. Prints one
JSON line: requests, p50/p99/max in ms, and the pages that came back short or failed.
"""
import argparse
import json
import random
import statistics
import sys
import time

import websockets.sync.client


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", required=True)
    ap.add_argument("--duration", type=float, default=30)
    ap.add_argument("--deep", type=int, required=True, help="the oldest messages per group to page among")
    ap.add_argument("--groups", type=int, default=50)
    ap.add_argument("--limit", type=int, default=50)
    ap.add_argument("--email", default="user0@example.com")
    ap.add_argument("--password", default="password123")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    ws = websockets.sync.client.connect(args.url, compression=None, max_size=2 ** 26, open_timeout=60)
    counter = iter(range(1, 1 << 62))

    def call(op, **fields):
        request_id = next(counter)
        ws.send(json.dumps({"op": op, "id": request_id, **fields}))
        while True:
            reply = json.loads(ws.recv(timeout=60))
            if reply.get("id") == request_id:
                return reply

    login = call("login", email=args.email, password=args.password)
    assert login["op"] == "ok", login
    summaries = call("groups")["groups"][: args.groups]
    deep = {}
    for summary in summaries:
        ids = []
        after = "-"
        while len(ids) < args.deep:
            page = call("history", group=summary["id"], after=after, limit=200)
            ids += [m["id"] for m in page["messages"]]
            if not page["more"] or not page["messages"]:
                break
            after = ids[-1]
        deep[summary["id"]] = ids[: args.deep]
    groups = [g for g, ids in deep.items() if len(ids) > args.limit]
    assert groups, "no group has enough history"
    latencies = []
    short = 0
    failed = 0
    end = time.monotonic() + args.duration
    while time.monotonic() < end:
        gid = rng.choice(groups)
        before = rng.choice(deep[gid][args.limit:])
        start = time.perf_counter()
        reply = call("history", group=gid, before=before, limit=args.limit)
        latencies.append((time.perf_counter() - start) * 1000)
        if reply["op"] != "ok":
            failed += 1
        elif len(reply["messages"]) != args.limit:
            short += 1
    latencies.sort()
    result = {"tool": "history-paging", "groups": len(groups), "requests": len(latencies),
              "p50_ms": round(statistics.median(latencies), 3),
              "p99_ms": round(latencies[int(len(latencies) * 0.99) - 1], 3),
              "max_ms": round(latencies[-1], 3), "short_pages": short, "failed": failed}
    print(json.dumps(result))
    ws.close()
    return 0 if failed == 0 and short == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
