"""The attackers of the soak (scripts/soak/run; docs/security.md says what each one must get).
Every attack runs for --duration from its own source address (127.0.2.x), reconnecting after
each answer, and tallies the answers it got: an attempt ends in an expected outcome (the close
code, status or reply the limit promises, within its time) or an unexpected one.

    python3 attackers.py --port P --tls-port T --duration 600 --out attackers.json \\
        [--handshake-timeout 10] [--idle-timeout 60]

Attacks: slowloris on the plain and TLS ports; ping floods that never read; publish floods on
/rooms and /ws; zip bombs (permessage-deflate messages inflating past maxMessageSize); half-open
TCP (WebSockets that go silent and never answer a ping, and connections dropped with a reset
via SO_LINGER 0 while the server has bytes for them); oversized heads and frames; 100 KB
passwords on /ws login. The silent half-open sockets stay open after --duration until the server
should have reaped them (idle timeout + 30 s), then each is checked for the server's close: the
run's descriptor check (scripts/soak/run) happens while they are still held."""

import argparse
import asyncio
import collections
import json
import ssl
import struct
import sys
import zlib

import wsproto

ADDRESSES = {"slowloris": "127.0.2.1", "slowloris-tls": "127.0.2.2", "ping-flood": "127.0.2.3",
             "room-flood": "127.0.2.4", "chat-flood": "127.0.2.5", "big-password": "127.0.2.6",
             "zip-bomb": "127.0.2.7", "half-open": "127.0.2.8", "reset": "127.0.2.9", "oversized": "127.0.2.10"}
CONNECTION_ERRORS = (ConnectionError, wsproto.Closed, asyncio.IncompleteReadError, ssl.SSLError)


class Tally:
    """Per attack: attempts and outcomes; an outcome is expected or not."""

    def __init__(self):
        self.attempts = collections.Counter()
        self.outcomes = collections.defaultdict(collections.Counter)
        self.unexpected = collections.Counter()
        self.extra = collections.defaultdict(collections.Counter)

    def record(self, attack, outcome, expected=True):
        self.attempts[attack] += 1
        self.outcomes[attack][outcome] += 1
        if not expected:
            self.unexpected[attack] += 1

    def add(self, attack, counter, amount=1):
        self.extra[attack][counter] += amount

    def summary(self):
        return {attack: {"attempts": self.attempts[attack], "unexpected": self.unexpected[attack],
                         "outcomes": dict(self.outcomes[attack]), **dict(self.extra[attack])}
                for attack in sorted(set(self.attempts) | set(self.extra))}


class Attackers:
    def __init__(self, args):
        self.args = args
        self.tally = Tally()
        self.loop = asyncio.get_running_loop()
        self.deadline = self.loop.time() + args.duration
        self.tls = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        self.tls.check_hostname = False
        self.tls.verify_mode = ssl.CERT_NONE
        self.held = []
        self.bomb = self.deflate(b"\0" * (64 << 20))

    def running(self):
        return self.loop.time() < self.deadline

    @staticmethod
    def deflate(data):
        """Raw deflate with the RFC 7692 tail removed: one permessage-deflate message."""
        compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
        body = compressor.compress(data) + compressor.flush(zlib.Z_SYNC_FLUSH)
        return body[:-4]

    async def repeat(self, attack, pause, body):
        """Runs `body` until the deadline; a connection error the body did not expect counts."""
        while self.running():
            try:
                await body()
            except CONNECTION_ERRORS as error:
                self.tally.record(attack, f"connection error: {type(error).__name__}", expected=False)
            except OSError as error:
                self.tally.record(attack, f"os error: {error.strerror or type(error).__name__}", expected=False)
            await asyncio.sleep(pause)

    async def closed_within(self, reader, writer, limit, drip=None):
        """Waits for the server to end the stream, writing `drip` once a second meanwhile;
        returns the seconds it took, or None past `limit` + 10 s (or the deadline)."""
        start = self.loop.time()
        while self.loop.time() - start < limit + 10 and self.running():
            try:
                if not await asyncio.wait_for(reader.read(65536), 1.0):
                    return self.loop.time() - start
            except asyncio.TimeoutError:
                if drip and not writer.is_closing():
                    writer.write(drip)
            except CONNECTION_ERRORS:
                return self.loop.time() - start
        return None

    def timed(self, attack, elapsed, limit):
        if elapsed is None:
            self.tally.record(attack, "still open at the deadline" if not self.running() else f"open past {limit + 10:.0f} s",
                              expected=not self.running())
        else:
            self.tally.record(attack, f"closed within {limit + 3:.0f} s" if elapsed <= limit + 3 else "closed late",
                              expected=elapsed <= limit + 3)

    # Slowloris: a request head that never ends, one byte a second.

    async def slowloris(self):
        async def one():
            reader, writer = await wsproto.open_stream(self.args.port, ADDRESSES["slowloris"])
            writer.write(b"GET /rooms/slow HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            self.timed("slowloris", await self.closed_within(reader, writer, self.args.handshake_timeout, b"a"),
                       self.args.handshake_timeout)
            writer.transport.abort()
        await self.repeat("slowloris", 0.1, one)

    async def slowloris_tls(self, variant):
        async def one():
            attack = f"slowloris-tls ({variant})"
            if variant == "after handshake":
                reader, writer = await wsproto.open_stream(self.args.tls_port, ADDRESSES["slowloris-tls"], ssl=self.tls)
                writer.write(b"GET /rooms/slow HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
                drip = b"a"
            else:
                reader, writer = await wsproto.open_stream(self.args.tls_port, ADDRESSES["slowloris-tls"])
                drip = b"\x16" if variant == "partial hello" else None
                if variant == "partial hello":
                    writer.write(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")
            self.timed(attack, await self.closed_within(reader, writer, self.args.handshake_timeout, drip),
                       self.args.handshake_timeout)
            writer.transport.abort()
        await self.repeat(f"slowloris-tls ({variant})", 0.1, one)

    # Floods.

    async def raw_upgrade(self, path, source, extra="", linger_reset=False):
        """A WebSocket on a bare socket (nothing reads it unless we do); returns (sock, head)."""
        sock = wsproto.source_socket(source, linger_reset)
        try:
            await self.loop.sock_connect(sock, ("127.0.0.1", self.args.port))
            await self.loop.sock_sendall(sock, wsproto.upgrade_request(path, self.args.port, extra))
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = await asyncio.wait_for(self.loop.sock_recv(sock, 4096), 30)
                if not chunk:
                    raise wsproto.Closed("closed during the upgrade")
                head += chunk
        except BaseException:
            sock.close()
            raise
        return sock, head.decode("latin-1")

    async def ping_flood(self):
        batch = wsproto.frame(0x9, b"p" * 125) * 500
        # A send that completes at once does not yield; without this one flooder takes the loop.

        async def one():
            sock, head = await self.raw_upgrade("/echo", ADDRESSES["ping-flood"])
            start = self.loop.time()
            limit = self.args.idle_timeout + 30
            try:
                while self.running() and self.loop.time() - start < limit + 10:
                    await asyncio.wait_for(self.loop.sock_sendall(sock, batch), 10.0)
                    self.tally.add("ping-flood", "pings_sent", 500)
                    await asyncio.sleep(0)
                elapsed = None
            except asyncio.TimeoutError:
                # The server stopped reading us: it has closed (a reset follows) or soon will.
                elapsed = await self.reset_within(sock, start, limit)
            except ConnectionError:
                elapsed = self.loop.time() - start
            sock.close()
            self.timed("ping-flood", elapsed, limit)
        await self.repeat("ping-flood", 0.5, one)

    async def reset_within(self, sock, start, limit):
        """Keeps offering one byte at a time until the socket errors (the server closed)."""
        while self.running() and self.loop.time() - start < limit + 10:
            try:
                await asyncio.wait_for(self.loop.sock_sendall(sock, b"\x89"), 1.0)
            except asyncio.TimeoutError:
                continue
            except ConnectionError:
                return self.loop.time() - start
        return None

    async def room_flood(self, worker):
        room = f"/rooms/flood-{worker}?notices=0"
        message = wsproto.frame(0x1, b"f" * 1000)

        async def one():
            reader, writer, status, _ = await wsproto.upgrade(self.args.port, room, ADDRESSES["room-flood"])
            if status != 101:
                self.tally.record("room-flood", f"status {status}", expected=False)
                return writer.transport.abort()
            notices = []

            async def flood():
                try:
                    while self.running() and not writer.is_closing():
                        writer.write(message * 200)
                        self.tally.add("room-flood", "messages_sent", 200)
                        await writer.drain()
                except CONNECTION_ERRORS:
                    pass
            flooding = asyncio.create_task(flood())
            try:
                code = await asyncio.wait_for(wsproto.until_close(reader, lambda _op, text: notices.append(text)),
                                              max(1.0, self.deadline - self.loop.time()))
                told = any(text.startswith(b"* slow down") for text in notices)
                self.tally.record("room-flood", f"close {code}" + (" after '* slow down'" if told else ""),
                                  expected=code == 1008 and told)
            except asyncio.TimeoutError:
                self.tally.record("room-flood", "open at the deadline")
            finally:
                flooding.cancel()
                writer.transport.abort()
        # A member that reads everything, so that the flood is relayed to someone.
        reader, writer, _, _ = await wsproto.upgrade(self.args.port, room, ADDRESSES["room-flood"])
        listening = asyncio.create_task(wsproto.until_eof(reader))
        await self.repeat("room-flood", 0.2, one)
        listening.cancel()
        writer.transport.abort()

    async def chat_request(self, writer, reader, request):
        writer.write(wsproto.frame(0x1, json.dumps(request).encode()))
        while True:
            _, _, opcode, payload = await wsproto.read_frame(reader)
            if opcode == 0x8:
                raise wsproto.Closed(f"close {wsproto.close_code(payload)}")
            reply = json.loads(payload)
            if reply.get("id") == request.get("id"):
                return reply

    async def chat_flood(self, worker):
        reader, writer, _, _ = await wsproto.upgrade(self.args.port, "/ws", ADDRESSES["chat-flood"])
        signup = await self.chat_request(writer, reader, {
            "op": "signup", "id": 1, "email": f"flood{worker}@soak.test", "password": "correct horse", "name": "flood"})
        token = signup["token"]
        group = (await self.chat_request(writer, reader, {"op": "create", "id": 2, "name": "flood"}))["group"]["id"]
        writer.transport.abort()

        async def one():
            reader, writer, _, _ = await wsproto.upgrade(self.args.port, f"/ws?token={token}", ADDRESSES["chat-flood"])
            batch = b"".join(wsproto.frame(0x1, json.dumps({"op": "send", "id": n, "group": group, "text": "flood"}).encode())
                             for n in range(400))
            writer.write(batch)
            replies = collections.Counter()
            try:
                code = await asyncio.wait_for(wsproto.until_close(
                    reader, lambda _op, text: replies.update([json.loads(text).get("code", "ok")])), 30)
                self.tally.add("chat-flood", "rate_limited_replies", replies["rate_limited"])
                self.tally.add("chat-flood", "ok_replies", replies["ok"])
                self.tally.record("chat-flood", f"close {code}" + (" after rate_limited" if replies["rate_limited"] else ""),
                                  expected=code == 1008 and replies["rate_limited"] > 0)
            except asyncio.TimeoutError:
                self.tally.record("chat-flood", "not closed within 30 s", expected=False)
            writer.transport.abort()
        await self.repeat("chat-flood", 1.0, one)

    async def big_passwords(self):
        """100 logins a second with 100 KB passwords, and a password guesser on one account."""
        password = "p" * 100_000
        reader, writer, _, _ = await wsproto.upgrade(self.args.port, "/ws", ADDRESSES["big-password"])
        await self.chat_request(writer, reader, {
            "op": "signup", "id": 0, "email": "victim@soak.test", "password": "the right one", "name": "victim"})
        writer.transport.abort()
        latencies = []

        async def one():
            reader, writer, _, _ = await wsproto.upgrade(self.args.port, "/ws", ADDRESSES["big-password"])
            try:
                for n in range(50):
                    started = self.loop.time()
                    request = {"op": "login", "id": n, "email": "victim@soak.test", "password": password}
                    reply = await asyncio.wait_for(self.chat_request(writer, reader, request), 30)
                    latencies.append(self.loop.time() - started)
                    self.tally.record("big-password", f"{reply.get('code', 'ok')}", expected=reply.get("code") in ("bad_request", "rate_limited"))
                    await asyncio.sleep(0.01)
                for n in range(50, 60):
                    request = {"op": "login", "id": n, "email": "victim@soak.test", "password": f"guess {n}"}
                    reply = await asyncio.wait_for(self.chat_request(writer, reader, request), 30)
                    self.tally.record("password-guess", reply.get("code", "ok"),
                                      expected=reply.get("code") in ("unauthorized", "rate_limited"))
            finally:
                writer.transport.abort()
        await self.repeat("big-password", 0.1, one)
        if latencies:
            self.tally.add("big-password", "reply_p99_ms", round(1000 * wsproto.percentile(latencies, 0.99), 1))

    # Zip bombs: 64 MiB of zeros in a 64 KB permessage-deflate message; maxMessageSize is 1 MiB.

    async def zip_bomb(self, path, fragmented):
        attack = f"zip-bomb ({'fragmented' if fragmented else 'one frame'})"

        async def one():
            reader, writer, status, head = await wsproto.upgrade(
                self.args.port, path, ADDRESSES["zip-bomb"], extra="Sec-WebSocket-Extensions: permessage-deflate\r\n")
            if status != 101 or "permessage-deflate" not in head.lower():
                self.tally.record(attack, "deflate not agreed", expected=False)
                return writer.transport.abort()
            if fragmented:
                half = len(self.bomb) // 2
                writer.write(wsproto.frame(0x1, self.bomb[:half], fin=False, rsv=4) + wsproto.frame(0x0, self.bomb[half:]))
            else:
                writer.write(wsproto.frame(0x1, self.bomb, rsv=4))
            try:
                code = await asyncio.wait_for(wsproto.until_close(reader), 30)
                self.tally.record(attack, f"close {code}", expected=code == 1009)
            except asyncio.TimeoutError:
                self.tally.record(attack, "not closed within 30 s", expected=False)
            writer.transport.abort()
        await self.repeat(attack, 0.25, one)

    # Half-open TCP.

    async def half_open(self):
        """WebSockets that go silent: never read, never answer a ping. Held, then checked."""
        async def one():
            sock, head = await self.raw_upgrade("/rooms/silent", ADDRESSES["half-open"])
            self.held.append((self.loop.time(), sock))
            self.tally.add("half-open", "opened")
        await self.repeat("half-open (open)", 0.5, one)

    async def check_held(self, until_all):
        """Checks each silent socket once the server should have reaped it: a close frame (1001)
        and the end of stream must be waiting in its buffer."""
        limit = self.args.idle_timeout + 30
        while self.held and (until_all or self.running()):
            opened, sock = self.held[0]
            wait = opened + limit - self.loop.time()
            if wait > 0:
                await asyncio.sleep(min(wait, 1.0))
                continue
            self.held.pop(0)
            data, eof = b"", False
            sock.setblocking(False)
            try:
                while True:
                    chunk = sock.recv(65536)
                    if not chunk:
                        eof = True
                        break
                    data += chunk
            except BlockingIOError:
                pass
            except ConnectionError:
                eof = True
            close = data.rfind(b"\x88")
            code = struct.unpack("!H", data[close + 2:close + 4])[0] if close >= 0 and len(data) >= close + 4 else None
            self.tally.record("half-open", f"reaped (close {code})" if eof else "still open",
                              expected=eof and code == 1001)
            sock.close()

    async def reset(self):
        """Connections that vanish with a reset (SO_LINGER 0) while the server has bytes for them,
        or in the middle of a frame."""
        async def one():
            sock, _ = await self.raw_upgrade("/echo", ADDRESSES["reset"], linger_reset=True)
            payload = b"r" * (512 << 10)
            message = wsproto.frame(0x2, payload)
            await self.loop.sock_sendall(sock, message if self.tally.attempts["reset"] % 2 else message[:len(message) // 2])
            await asyncio.sleep(0.05)
            sock.close()
            self.tally.record("reset", "reset sent")
        await self.repeat("reset", 0.2, one)

    # Oversized heads and frames.

    async def oversized(self):
        variants = [
            ("head of 20 KB", b"GET /rooms/big HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 20_000 + b"\r\n\r\n", "431"),
            ("1,000 headers", b"GET /rooms/big HTTP/1.1\r\nHost: 127.0.0.1\r\n"
             + b"".join(b"X-%d: v\r\n" % n for n in range(1000)) + b"\r\n", "431"),
            ("frame of 2^40 bytes", wsproto.frame(0x2, b"", length=1 << 40), "close 1009"),
            ("frame of 2 MiB", wsproto.frame(0x2, b"", length=2 << 20), "close 1009"),
            ("1.5 MiB in fragments", b"".join(wsproto.frame(0x2 if n == 0 else 0x0, b"o" * (300 << 10), fin=False)
                                              for n in range(5)) + wsproto.frame(0x0, b"o"), "close 1009"),
            ("control frame of 200 bytes", wsproto.frame(0x9, b"c" * 200), "close 1002"),
        ]
        turn = 0

        async def one():
            nonlocal turn
            name, data, expected = variants[turn % len(variants)]
            turn += 1
            attack = f"oversized ({name})"
            if expected == "431":
                reader, writer = await wsproto.open_stream(self.args.port, ADDRESSES["oversized"])
                writer.write(data)
                status, _ = await asyncio.wait_for(wsproto.read_head(reader), 30)
                outcome = str(status)
            else:
                reader, writer, _, _ = await wsproto.upgrade(self.args.port, "/echo", ADDRESSES["oversized"])
                writer.write(data)
                outcome = f"close {await asyncio.wait_for(wsproto.until_close(reader), 30)}"
            self.tally.record(attack, outcome, expected=outcome == expected)
            writer.transport.abort()
        await self.repeat("oversized", 0.1, one)

    def tasks(self, group):
        """The coroutines of one group of attacks (each group runs in its own process: a flood
        keeps its asyncio loop busy, which would make the timed attacks look late)."""
        n = self.args.connections
        if group == "ping-flood":
            return [self.ping_flood() for _ in range(4)]
        if group == "publish-flood":
            return [self.room_flood(worker) for worker in range(2)] + [self.chat_flood(worker) for worker in range(2)]
        return ([self.slowloris() for _ in range(n)]
                + [self.slowloris_tls(variant) for variant in ("silent", "partial hello", "after handshake")
                   for _ in range(max(1, n // 3))]
                + [self.big_passwords(), self.zip_bomb("/echo", False), self.zip_bomb("/rooms/bomb?notices=0", True),
                   self.half_open(), self.check_held(until_all=False), self.reset(), self.oversized()])

    async def run(self):
        tasks = self.tasks(self.args.group)
        results = await asyncio.gather(*tasks, return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                self.tally.record("set-up", f"failed: {type(result).__name__}: {result}", expected=False)
        print(f"attackers: done; holding {len(self.held)} silent sockets until checked", file=sys.stderr, flush=True)
        await self.check_held(until_all=True)


async def main(args):
    attackers = Attackers(args)
    await attackers.run()
    summary = attackers.tally.summary()
    with open(args.out, "w") as out:
        json.dump(summary, out, indent=1)
    print(json.dumps({attack: {"attempts": v["attempts"], "unexpected": v["unexpected"]} for attack, v in summary.items()}),
          file=sys.stderr)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--tls-port", type=int, required=True)
    parser.add_argument("--duration", type=float, default=600)
    parser.add_argument("--connections", type=int, default=90, help="slowloris connections per port")
    parser.add_argument("--handshake-timeout", type=float, default=10)
    parser.add_argument("--idle-timeout", type=float, default=60)
    parser.add_argument("--group", choices=("ping-flood", "publish-flood", "others"), default="others")
    parser.add_argument("--out", required=True)
    asyncio.run(main(parser.parse_args()))
