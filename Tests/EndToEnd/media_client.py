"""Helpers for the media tests: tiny images of each accepted type, and an HTTP client for uploads
(docs/protocol.md, "Media")."""

import http.client
import json
import os
import struct
import zlib

from conftest import PATIENCE


def png(width=2, height=2, seed=0):
    """A valid PNG of `width` x `height` grey pixels; `seed` changes the bytes."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    rows = b"".join(b"\x00" + bytes([(seed + x) % 256 for x in range(width)]) for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


# The server checks an upload's signature, not the whole file, so these only begin as each format
# does: a 1x1 GIF89a (complete), and JPEG and WebP headers followed by filler. The browser test uses
# the PNG above, which is a whole image.
GIF = bytes.fromhex("474946383961010001008000000000ffffff21f90401000000002c00000000010001000002024401003b")
JPEG = bytes.fromhex("ffd8ffe000104a46494600010100000100010000") + b"\x00" * 64 + bytes.fromhex("ffd9")
WEBP = b"RIFF" + struct.pack("<I", 4 + 64) + b"WEBP" + b"\x00" * 64

SAMPLES = {"image/png": png(), "image/jpeg": JPEG, "image/gif": GIF, "image/webp": WEBP}


def image_of_size(size):
    """A PNG of exactly `size` bytes: a real header, then padding after IEND (still image/png)."""
    base = png()
    assert size >= len(base)
    return base + os.urandom(size - len(base))


def request(server, method, path, body=b"", headers=None):
    """One request on a fresh connection: (status, headers, body bytes)."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=PATIENCE)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def upload(server, token, body, content_type="image/png"):
    """POSTs `body` to /api/v1/media: (status, JSON reply)."""
    headers = {"Content-Type": content_type}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    status, _, payload = request(server, "POST", "/api/v1/media", body, headers)
    return status, json.loads(payload) if payload else None
