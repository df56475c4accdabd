"""A client KeyUpdate (update_requested) in the middle of a room fan-out burst over wss://:
`openssl s_client` types `K` while frames for it are being sealed through the multi-chunk send
path; every message must still arrive, in order (docs/security.md, "TLS")."""

import os
import subprocess
import threading

from wsraw import RawClient


class SClient:
    """`openssl s_client` as a room member: it sends the upgrade by hand and prints frames."""

    def __init__(self, port):
        self.process = subprocess.Popen(
            ["openssl", "s_client", "-connect", f"127.0.0.1:{port}", "-servername", "localhost",
             "-tls1_3", "-crlf"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.output = b""
        self.changed = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        while True:
            chunk = os.read(self.process.stdout.fileno(), 65536)
            with self.changed:
                if not chunk:
                    self.output += b"<eof>"
                    self.changed.notify_all()
                    return
                self.output += chunk
                self.changed.notify_all()

    def type(self, line):
        self.process.stdin.write(line.encode() + b"\n")
        self.process.stdin.flush()

    def wait_for(self, marker, timeout=30):
        with self.changed:
            assert self.changed.wait_for(lambda: marker in self.output or b"<eof>" in self.output, timeout), marker
            assert marker in self.output, self.output[-2000:]

    def stop(self):
        self.process.kill()
        self.process.wait()


def burst(first, count):
    return b"".join(RawClient.frame(0x1, f"<m{index:05d}>".encode() + b"k" * 400) for index in range(first, first + count))


def test_a_client_key_update_in_the_middle_of_a_fan_out_burst_loses_nothing(start_server, certificate):
    cert, key = certificate
    server = start_server("--tls-cert", cert, "--tls-key", key, "--tls-port", "0",
                          env={"SWITCHBOARD_ROOM_MESSAGES_PER_SECOND": "100000"})
    member = SClient(server.tls_port)
    try:
        member.wait_for(b"TLSv1.3")
        for line in ("GET /rooms/keys?notices=0 HTTP/1.1", "Host: localhost", "Upgrade: websocket",
                     "Connection: Upgrade", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
                     "Sec-WebSocket-Version: 13", ""):
            member.type(line)
        member.wait_for(b"HTTP/1.1 101")
        publisher = RawClient(server.port, "/rooms/keys?notices=0")
        publisher.sock.sendall(burst(0, 300))
        member.wait_for(b"<m00299>")
        publisher.sock.sendall(burst(300, 300))
        member.type("K")
        publisher.sock.sendall(burst(600, 300))
        member.wait_for(b"<m00899>")
        assert b"KEYUPDATE" in member.output
        markers = [int(part[:5]) for part in member.output.split(b"<m")[1:]]
        assert markers == list(range(900)), "a message was lost or reordered around the KeyUpdate"
        publisher.close()
    finally:
        member.stop()
