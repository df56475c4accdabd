"""Well-behaved churn for the soak (scripts/soak/run): sessions started at a fixed open-loop
rate, each two fresh connections to a room of their own on /rooms (`?notices=0`). Once both are
open, A sends three numbered messages; B must get exactly those three, in order, and nothing
else before the server answers its close; A must get nothing. Both then close with the closing
handshake. So every session is two connects and two closes, and every message is checked:
loss (B timed out or the stream ended first), duplicates and strays (anything more) are counted.

    python3 churn.py --port PORT --rate 200 --duration 600 --sources 127.0.1.1-40 --out churn.json

Prints a JSON line every --report seconds on stderr and the totals to --out."""

import argparse
import asyncio
import json
import os
import sys

import wsproto

MESSAGES = 3


class Totals:
    def __init__(self):
        self.started = self.completed = self.failed = self.skipped = 0
        self.lost = self.duplicates = self.strays = self.refused = self.out_of_order = 0
        self.errors = {}
        self.connect_ms = []
        self.delivery_ms = []
        self.in_flight = 0

    def error(self, kind):
        self.failed += 1
        self.errors[kind] = self.errors.get(kind, 0) + 1

    def summary(self):
        return {
            "started": self.started, "completed": self.completed, "failed": self.failed, "skipped": self.skipped,
            "connects": 2 * self.started, "messages_expected": MESSAGES * self.started,
            "lost": self.lost, "duplicates": self.duplicates, "out_of_order": self.out_of_order, "strays": self.strays, "refused": self.refused,
            "errors": self.errors,
            "connect_ms": {"p50": wsproto.percentile(self.connect_ms, 0.5), "p99": wsproto.percentile(self.connect_ms, 0.99),
                           "max": max(self.connect_ms, default=None)},
            "delivery_ms": {"p50": wsproto.percentile(self.delivery_ms, 0.5), "p99": wsproto.percentile(self.delivery_ms, 0.99),
                            "max": max(self.delivery_ms, default=None)},
        }


class Session:
    """One churn session; `phase` and `received` say what a failure cost (loss only while
    delivering)."""

    def __init__(self, index, args, source, totals):
        self.index, self.args, self.source, self.totals = index, args, source, totals
        self.phase = "connect"
        self.received = []
        self.expected = [f"{index}:{n}" for n in range(MESSAGES)]
        self.streams = []

    async def run(self):
        room = f"/rooms/churn-{os.getpid()}-{self.index}?notices=0"
        started = wsproto.now()
        for _ in range(2):
            reader, writer, status, _ = await wsproto.upgrade(self.args.port, room, self.source)
            self.streams.append((reader, writer))
            if status != 101:
                self.totals.refused += 1
                raise wsproto.Closed(f"status {status}")
        self.totals.connect_ms.append((wsproto.now() - started) * 1000)
        (reader_a, writer_a), (reader_b, writer_b) = self.streams
        self.phase = "deliver"
        sent_at = wsproto.now()
        writer_a.write(b"".join(wsproto.frame(0x1, text.encode()) for text in self.expected))
        while len(self.received) < MESSAGES:
            _, _, opcode, payload = await wsproto.read_frame(reader_b)
            if opcode == 0x1:
                self.received.append(payload.decode())
        self.totals.delivery_ms.append((wsproto.now() - sent_at) * 1000)
        self.phase = "close"
        self.count(self.received)
        extra = []
        writer_b.write(wsproto.close_frame())
        writer_a.write(wsproto.close_frame())
        for reader in (reader_b, reader_a):
            code = await wsproto.until_close(reader, lambda _opcode, payload: extra.append(payload.decode()))
            if code != 1000:
                raise wsproto.Closed(f"close {code}")
            await wsproto.until_eof(reader)
        self.count(extra, after_all=True)

    def count(self, texts, after_all=False):
        """Strays are texts not sent in this session; duplicates are repeats (or, after all three
        arrived, any copy)."""
        mine = [text for text in texts if text in self.expected]
        self.totals.strays += len(texts) - len(mine)
        self.totals.duplicates += len(mine) if after_all else len(mine) - len(set(mine))
        if not after_all and len(set(mine)) == len(mine) and mine != sorted(mine, key=self.expected.index):
            self.totals.out_of_order += 1

    def failed(self, kind):
        if self.phase == "deliver":
            self.totals.lost += MESSAGES - len(set(self.received) & set(self.expected))
        self.totals.error(f"{self.phase}: {kind}")

    def abort(self):
        for _, writer in self.streams:
            writer.transport.abort()


async def bounded(index, args, source, totals):
    session = Session(index, args, source, totals)
    totals.in_flight += 1
    try:
        await asyncio.wait_for(session.run(), args.session_timeout)
        totals.completed += 1
    except asyncio.TimeoutError:
        session.failed("timeout")
    except wsproto.Closed as error:
        session.failed(str(error))
    except OSError as error:
        session.failed(type(error).__name__)
    finally:
        session.abort()
        totals.in_flight -= 1


async def main(args):
    sources = wsproto.addresses(args.sources)
    totals = Totals()
    loop = asyncio.get_running_loop()
    start = loop.time()
    tasks = set()
    index = 0
    next_report = start + args.report
    while True:
        now = loop.time()
        if now - start >= args.duration:
            break
        due = int((now - start) * args.rate)
        while index < due:
            if totals.in_flight >= args.max_in_flight:
                totals.skipped += 1
            else:
                totals.started += 1
                task = asyncio.create_task(bounded(index, args, sources[index % len(sources)], totals))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
            index += 1
        if now >= next_report:
            print(json.dumps({"t": round(now - start, 1), "in_flight": totals.in_flight, **{
                k: v for k, v in totals.summary().items() if k in ("started", "completed", "failed", "lost", "duplicates")}}),
                file=sys.stderr, flush=True)
            next_report += args.report
        await asyncio.sleep(0.005)
    if tasks:
        await asyncio.wait(tasks, timeout=args.session_timeout + 5)
    result = totals.summary()
    result["rate"] = args.rate
    result["duration_s"] = args.duration
    result["ok"] = result["failed"] == 0 and result["lost"] == 0 and result["duplicates"] == 0 and result["strays"] == 0 and result["out_of_order"] == 0
    with open(args.out, "w") as out:
        json.dump(result, out)
    print(json.dumps(result), file=sys.stderr)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--rate", type=float, default=200, help="sessions per second (two connections each)")
    parser.add_argument("--duration", type=float, default=600)
    parser.add_argument("--sources", default="127.0.1.1-40")
    parser.add_argument("--session-timeout", type=float, default=30)
    parser.add_argument("--max-in-flight", type=int, default=2000)
    parser.add_argument("--report", type=float, default=10)
    parser.add_argument("--out", required=True)
    asyncio.run(main(parser.parse_args()))
