"""The bits of RFC 6455 the soak's Python clients speak (scripts/soak): a raw upgrade over an
asyncio stream from a chosen source address, masked frames of any shape (well-formed or not),
and reading server frames. Hand-made on purpose: the attackers send what real libraries refuse
to, and the churn clients must see every frame exactly as it arrives."""

import asyncio
import base64
import os
import socket
import struct
import time

IP_BIND_ADDRESS_NO_PORT = 24


class Closed(Exception):
    """The server ended the stream (EOF or reset) where a frame was expected."""


def source_socket(source, linger_reset=False):
    """A non-blocking TCP socket bound to `source` (port chosen at connect, so thousands of
    connections per address do not exhaust ports at bind)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, 1)
    if linger_reset:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.bind((source, 0))
    sock.setblocking(False)
    return sock


async def open_stream(port, source, ssl=None, linger_reset=False):
    """Connects from `source` to 127.0.0.1:`port`; returns (reader, writer)."""
    sock = source_socket(source, linger_reset)
    try:
        await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
    except BaseException:
        sock.close()
        raise
    return await asyncio.open_connection(sock=sock, ssl=ssl, server_hostname="localhost" if ssl else None,
                                         limit=4 * 1024 * 1024)


def upgrade_request(path, port, extra=""):
    key = base64.b64encode(os.urandom(16)).decode()
    return (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n{extra}\r\n").encode()


async def read_head(reader):
    """The response head; returns (status, head text)."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError) as error:
        raise Closed("closed before the response head") from error
    text = head.decode("latin-1")
    return int(text.split(" ", 2)[1]), text


async def upgrade(port, path, source, ssl=None, extra="", linger_reset=False):
    """Opens a WebSocket; returns (reader, writer, status, head). The caller checks status."""
    reader, writer = await open_stream(port, source, ssl, linger_reset)
    writer.write(upgrade_request(path, port, extra))
    status, head = await read_head(reader)
    return reader, writer, status, head


def frame(opcode, payload=b"", fin=True, rsv=0, length=None):
    """A masked client frame; `length` overrides the declared payload length (oversized frames)."""
    first = (0x80 if fin else 0) | (rsv << 4) | opcode
    declared = len(payload) if length is None else length
    if declared < 126:
        header = struct.pack("!BB", first, 0x80 | declared)
    elif declared < 65536:
        header = struct.pack("!BBH", first, 0x80 | 126, declared)
    else:
        header = struct.pack("!BBQ", first, 0x80 | 127, declared)
    key = os.urandom(4)
    if not payload:
        return header + key
    mask = (key * (len(payload) // 4 + 1))[:len(payload)]
    masked = (int.from_bytes(payload, "big") ^ int.from_bytes(mask, "big")).to_bytes(len(payload), "big")
    return header + key + masked


def close_frame(code=1000):
    return frame(0x8, struct.pack("!H", code))


async def read_frame(reader):
    """One server frame: (fin, rsv, opcode, payload). Raises Closed at end of stream."""
    try:
        first, second = await reader.readexactly(2)
        length = second & 0x7F
        if length == 126:
            length = struct.unpack("!H", await reader.readexactly(2))[0]
        elif length == 127:
            length = struct.unpack("!Q", await reader.readexactly(8))[0]
        payload = await reader.readexactly(length)
    except (asyncio.IncompleteReadError, ConnectionError) as error:
        raise Closed("end of stream") from error
    return bool(first & 0x80), (first >> 4) & 7, first & 0x0F, payload


def close_code(payload):
    return struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None


async def until_close(reader, on_data=None):
    """Reads frames until the server's close frame; returns its code. Data frames before it go
    to `on_data(opcode, payload)`."""
    while True:
        _, _, opcode, payload = await read_frame(reader)
        if opcode == 0x8:
            return close_code(payload)
        if opcode in (0x1, 0x2) and on_data:
            on_data(opcode, payload)


async def until_eof(reader):
    """Reads and drops everything until the server closes the stream."""
    try:
        while await reader.read(65536):
            pass
    except ConnectionError:
        pass


def addresses(spec):
    """'127.0.1.1-50' -> ['127.0.1.1', ..., '127.0.1.50']."""
    base, _, last = spec.rpartition(".")
    first, _, end = last.partition("-")
    return [f"{base}.{i}" for i in range(int(first), int(end or first) + 1)]


def percentile(values, q):
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def now():
    return time.monotonic()
