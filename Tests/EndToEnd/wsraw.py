"""A minimal hand-made WebSocket client for sending what real clients refuse to send
(unmasked frames, bad UTF-8, odd fragmentation) and reading exactly what comes back."""

import base64
import os
import socket
import struct
from conftest import PATIENCE


class RawClient:
    def __init__(self, port, path="/echo", host="127.0.0.1", headers=None, source=None):
        self.sock = socket.create_connection((host, port), timeout=PATIENCE, source_address=(source, 0) if source else None)
        key = base64.b64encode(os.urandom(16)).decode()
        extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        self.sock.sendall(
            f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n{extra}\r\n".encode())
        self.buffer = b""
        head = self._read_until(b"\r\n\r\n")
        self.status = int(head.split(b" ")[1])
        self.response_head = head.decode("latin-1")

    def _read_until(self, marker):
        while marker not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed during handshake")
            self.buffer += chunk
        head, self.buffer = self.buffer.split(marker, 1)
        return head

    def _read_exact(self, count):
        while len(self.buffer) < count:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("connection closed")
            self.buffer += chunk
        data, self.buffer = self.buffer[:count], self.buffer[count:]
        return data

    @staticmethod
    def frame(opcode, payload=b"", fin=True, mask=True, rsv=0):
        first = (0x80 if fin else 0) | (rsv << 4) | opcode
        length = len(payload)
        mask_bit = 0x80 if mask else 0
        if length < 126:
            header = struct.pack("!BB", first, mask_bit | length)
        elif length < 65536:
            header = struct.pack("!BBH", first, mask_bit | 126, length)
        else:
            header = struct.pack("!BBQ", first, mask_bit | 127, length)
        if not mask:
            return header + payload
        key = os.urandom(4)
        masked = bytes(b ^ key[i % 4] for i, b in enumerate(payload))
        return header + key + masked

    def send(self, opcode, payload=b"", **options):
        self.sock.sendall(self.frame(opcode, payload, **options))

    def recv_frame(self):
        """Returns (fin, opcode, payload); raises ConnectionError at end of stream."""
        fin, _, opcode, payload = self.recv_frame_with_rsv()
        return fin, opcode, payload

    def recv_frame_with_rsv(self):
        """Returns (fin, rsv, opcode, payload), rsv being the three reserved bits (4 = RSV1)."""
        first, second = self._read_exact(2)
        length = second & 0x7F
        if length == 126:
            length = struct.unpack("!H", self._read_exact(2))[0]
        elif length == 127:
            length = struct.unpack("!Q", self._read_exact(8))[0]
        assert second & 0x80 == 0, "server frames must not be masked"
        return bool(first & 0x80), (first >> 4) & 7, first & 0x0F, self._read_exact(length)

    def recv_close(self):
        """Reads frames until a close frame; returns its status code (None if empty)."""
        while True:
            _, opcode, payload = self.recv_frame()
            if opcode == 8:
                return struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None

    def at_eof(self):
        """True once the server has closed the TCP connection."""
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    return True
                self.buffer += chunk
        except (ConnectionResetError, socket.timeout):
            return False

    def close(self):
        self.sock.close()
