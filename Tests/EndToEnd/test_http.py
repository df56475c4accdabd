"""Plain HTTP endpoints and refusals (docs/protocol.md, "Endpoints")."""

import json
import socket
import urllib.error
import urllib.request
from conftest import PATIENCE


def get(url, headers=None):
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=PATIENCE) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def raw_request(port, data):
    with socket.create_connection(("127.0.0.1", port), timeout=PATIENCE) as sock:
        sock.sendall(data)
        reply = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return reply
            reply += chunk
            if b"\r\n\r\n" in reply:
                head, body = reply.split(b"\r\n\r\n", 1)
                length = [int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")]
                if length and len(body) >= length[0]:
                    return reply


def test_healthz_answers_ok(server):
    status, headers, body = get(server.http + "/healthz")
    assert status == 200
    assert json.loads(body) == {"status": "ok"}
    assert headers["Content-Type"].startswith("application/json")


def test_readyz_answers_ready_once_started(server):
    status, _, _ = get(server.http + "/readyz")
    assert status == 200


def test_unknown_path_gets_json_404(server):
    status, _, body = get(server.http + "/nope")
    assert status == 404
    assert json.loads(body)["error"] == "not_found"


def test_plain_get_to_websocket_path_gets_426(server):
    for path in ["/echo", "/rooms/lobby", "/ws"]:
        status, headers, body = get(server.http + path)
        assert status == 426, path
        assert headers["Sec-WebSocket-Version"] == "13"
        assert json.loads(body)["error"] == "upgrade_required"


def test_post_gets_405(server):
    reply = raw_request(server.port, b"POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi")
    assert reply.startswith(b"HTTP/1.1 405 ")
    assert b"Allow: GET" in reply


def test_oversized_headers_get_431(server):
    big = b"X-Filler: " + b"a" * 9000 + b"\r\n"
    reply = raw_request(server.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + big + b"\r\n")
    assert reply.startswith(b"HTTP/1.1 431 ")


def test_malformed_request_gets_400(server):
    reply = raw_request(server.port, b"GET\r\n\r\n")
    assert reply.startswith(b"HTTP/1.1 400 ")


def test_keep_alive_serves_several_requests_on_one_connection(server):
    with socket.create_connection(("127.0.0.1", server.port), timeout=PATIENCE) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /readyz HTTP/1.1\r\nHost: x\r\n\r\n")
        received = b""
        while received.count(b"HTTP/1.1 200") < 2:
            chunk = sock.recv(65536)
            assert chunk, "server closed a keep-alive connection"
            received += chunk
    assert b'{"status":"ok"}' in received and b'{"status":"ready"}' in received


def test_metrics_use_prometheus_text(server):
    status, headers, body = get(server.http + "/metrics")
    assert status == 200
    assert headers["Content-Type"].startswith("text/plain")
    text = body.decode()
    assert "# TYPE switchboard_connections gauge" in text
    assert "switchboard_messages_received_total{endpoint=\"room\"}" in text
    assert 'switchboard_connections{kind="room"}' in text
    assert "switchboard_online_users 0" in text
    assert "# TYPE switchboard_store_flush_seconds histogram" in text
    assert 'switchboard_store_batch_mutations_bucket{le="+Inf"}' in text


def test_bad_room_name_gets_400(server):
    from wsraw import RawClient
    client = RawClient(server.port, path="/rooms/bad%20name")
    assert client.status == 400


def test_wrong_websocket_version_gets_426(server):
    reply = raw_request(server.port, (
        "GET /echo HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 8\r\n\r\n").encode())
    assert reply.startswith(b"HTTP/1.1 426 ")
    assert b"Sec-WebSocket-Version: 13" in reply


def test_foreign_origin_is_refused(server):
    from wsraw import RawClient
    client = RawClient(server.port, path="/echo", headers={"Origin": "https://evil.example"})
    assert client.status == 403


def test_same_origin_is_allowed(server):
    from wsraw import RawClient
    client = RawClient(server.port, path="/echo", headers={"Origin": f"http://127.0.0.1:{server.port}"})
    assert client.status == 101


def test_a_request_trickled_slower_than_the_handshake_timeout_is_dropped(start_server):
    import time
    server = start_server(env={"SWITCHBOARD_HANDSHAKE_TIMEOUT": "2"})
    with socket.create_connection(("127.0.0.1", server.port), timeout=PATIENCE) as sock:
        request = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 40
        closed = False
        # One byte every 0.2 s (about 14 s in all) keeps the connection busy but never finishes
        # the head; the server must drop it while the bytes still come, 2 s after accept.
        for byte in request:
            try:
                sock.sendall(bytes([byte]))
            except (BrokenPipeError, ConnectionResetError):
                closed = True
                break
            time.sleep(0.2)
        assert closed, "the server kept a trickling request open past the handshake timeout"
