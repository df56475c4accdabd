"""wss:// through OpenSSL: handshakes, every path over TLS, bad certificates, plaintext on the TLS port."""

import json
import os
import socket
import ssl
import subprocess
import urllib.request

import pytest

from chromium import CHROMIUM_ECHO, CHROMIUM_ROOM, open_chromium
from conftest import (PATIENCE, UNLIMITED_PUBLISHING, binary_path, connect, make_certificate,
                      publish_past_a_reader_that_stopped)


@pytest.fixture
def tls_server(start_server, certificate):
    cert, key = certificate
    return start_server("--tls-cert", cert, "--tls-key", key, "--tls-port", "0")


def client_context(certificate):
    context = ssl.create_default_context(cafile=certificate[0])
    return context


def test_cert_command_writes_a_private_key_only_the_owner_can_read(certificate):
    assert os.stat(certificate[1]).st_mode & 0o077 == 0


def test_server_prints_both_listeners(tls_server):
    assert tls_server.urls["ws"].startswith("ws://")
    assert tls_server.urls["wss"].startswith("wss://")


def test_wss_echo_round_trips_text_and_binary(tls_server, certificate):
    url = f"wss://localhost:{tls_server.tls_port}/echo"
    with connect(url, ssl=client_context(certificate), max_size=2 << 20) as ws:
        for size in [0, 10, 70000, 1 << 20]:
            data = os.urandom(size)
            ws.send(data)
            assert ws.recv() == data
        ws.send("héllo")
        assert ws.recv() == "héllo"


def test_wss_and_ws_members_share_a_room(tls_server, certificate):
    secure = connect(f"wss://localhost:{tls_server.tls_port}/rooms/mixed?notices=0",
                     ssl=client_context(certificate)).__enter__()
    plain = connect(f"{tls_server.ws}/rooms/mixed?notices=0").__enter__()
    secure.send("from tls")
    assert plain.recv(timeout=PATIENCE) == "from tls"
    plain.send("from plain")
    assert secure.recv(timeout=PATIENCE) == "from plain"
    secure.close()
    plain.close()


def test_https_serves_health(tls_server, certificate):
    with urllib.request.urlopen(f"https://localhost:{tls_server.tls_port}/healthz",
                                context=client_context(certificate), timeout=PATIENCE) as response:
        assert json.loads(response.read()) == {"status": "ok"}


def test_openssl_s_client_negotiates_tls13_and_http11_alpn(tls_server):
    result = subprocess.run(
        ["openssl", "s_client", "-connect", f"127.0.0.1:{tls_server.tls_port}", "-servername", "localhost",
         "-alpn", "http/1.1"],
        input=b"", capture_output=True, timeout=PATIENCE)
    output = (result.stdout + result.stderr).decode()
    assert "TLSv1.3" in output
    assert "ALPN protocol: http/1.1" in output


def test_openssl_s_client_with_tls11_is_refused(tls_server):
    result = subprocess.run(
        ["openssl", "s_client", "-connect", f"127.0.0.1:{tls_server.tls_port}", "-tls1_1", "-brief"],
        input=b"", capture_output=True, timeout=PATIENCE)
    assert result.returncode != 0


def test_plaintext_on_the_tls_port_is_closed_and_the_server_carries_on(tls_server, certificate):
    with socket.create_connection(("127.0.0.1", tls_server.tls_port), timeout=PATIENCE) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        received = b""
        while True:
            chunk = sock.recv(4096)
            if not chunk:
                break
            received += chunk
        assert b"200" not in received
    with connect(f"wss://localhost:{tls_server.tls_port}/echo", ssl=client_context(certificate)) as ws:
        ws.send("still serving")
        assert ws.recv() == "still serving"


def test_missing_certificate_stops_the_start_naming_the_file(tmp_path):
    missing = str(tmp_path / "nope.pem")
    result = subprocess.run([binary_path(), "--port", "0", "--data", str(tmp_path / "data"),
                             "--tls-cert", missing, "--tls-key", missing],
                            capture_output=True, text=True, timeout=PATIENCE)
    assert result.returncode == 1
    assert "nope.pem" in result.stderr


def test_mismatched_key_stops_the_start_with_the_openssl_reason(tmp_path, certificate):
    _, other_key = make_certificate(tmp_path / "other")
    result = subprocess.run([binary_path(), "--port", "0", "--data", str(tmp_path / "data"),
                             "--tls-cert", certificate[0], "--tls-key", str(other_key)],
                            capture_output=True, text=True, timeout=PATIENCE)
    assert result.returncode == 1
    assert "key values mismatch" in result.stderr


def test_wss_burst_spanning_many_records_comes_back_whole_and_in_order(tls_server, certificate):
    # Echoes queued in one loop iteration are sealed together into records of up to 16 KiB,
    # straight from the frames: a burst of 120 messages of 3,000 bytes (360 KB) crosses many
    # record boundaries, some in the middle of a frame.
    url = f"wss://localhost:{tls_server.tls_port}/echo"
    messages = [f"{index:04d}" + "abcdefghij" * 300 for index in range(120)]
    with connect(url, ssl=client_context(certificate), compression=None) as ws:
        for message in messages:
            ws.send(message)
        assert [ws.recv(timeout=PATIENCE) for _ in messages] == messages


def test_a_wss_client_that_stops_reading_is_dropped_and_the_room_carries_on(start_server, certificate):
    # Over TLS the slow-consumer limit counts what waits for the socket (sealed records) plus
    # what waits to be sealed; a member that never reads must still be dropped at 1 MiB.
    cert, key = certificate
    server = start_server(
        "--tls-cert", cert, "--tls-key", key, "--tls-port", "0",
        env={"SWITCHBOARD_OUTBOUND_QUEUE_BYTES": "1048576", "SWITCHBOARD_MAX_MESSAGE_SIZE": "4096",
             **UNLIMITED_PUBLISHING})
    base = f"wss://localhost:{server.tls_port}/rooms/slow"
    with connect(f"{base}?name=watcher", ssl=client_context(certificate), compression=None) as watcher:
        assert watcher.recv(timeout=PATIENCE) == "* watcher joined (1 online)"
        sloth = client_context(certificate).wrap_socket(
            socket.create_connection(("localhost", server.tls_port), timeout=PATIENCE), server_hostname="localhost")
        sloth.sendall(
            "GET /rooms/slow?name=sloth&notices=0 HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n"
            "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
            .encode())
        assert sloth.recv(4096).startswith(b"HTTP/1.1 101")
        assert watcher.recv(timeout=PATIENCE) == "* sloth joined (2 online)"
        with connect(f"{base}?name=pub&notices=0", ssl=client_context(certificate), compression=None) as publisher:
            assert watcher.recv(timeout=PATIENCE) == "* pub joined (3 online)"
            publish_past_a_reader_that_stopped(publisher, watcher, "sloth")
        sloth.close()
    metrics = urllib.request.urlopen(server.http + "/metrics", timeout=PATIENCE).read().decode()
    assert "switchboard_slow_consumers_dropped_total 1" in metrics


def test_chromium_loads_the_page_over_https_and_talks_wss_with_compression(tls_server):
    # Chromium's TLS is BoringSSL, not OpenSSL: it checks every record the server seals.
    browser = open_chromium()
    try:
        browser.get(f"https://localhost:{tls_server.tls_port}/")
        assert browser.execute_script("return location.protocol") == "https:"
        base = f"wss://localhost:{tls_server.tls_port}"
        echo = browser.execute_async_script(CHROMIUM_ECHO, base)
        assert echo == {"same": True, "count": 300, "extensions": "permessage-deflate; server_no_context_takeover"}
        assert browser.execute_async_script(CHROMIUM_ROOM, base) == {"same": True}
    finally:
        browser.quit()
