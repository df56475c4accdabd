"""Media stored by the server (docs/protocol.md, "Media"): POST /api/v1/media with a session token,
GET /media/{id} for anyone with the URL, DELETE /api/v1/media/{id} by the owner; the limits
(size, quota, rate, a deadline for the body) and durability across kill -9."""

import json
import os
import signal
import socket
import time

import pytest

from chat_client import connect_as, group_with, signup
from conftest import PATIENCE
from media_client import SAMPLES, image_of_size, png, request, upload
from sse_client import ADMIN_TOKEN, admin_server


def read_response(sock):
    """Reads one HTTP response from a raw socket until the peer closes: (status, head, body)."""
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ")[1]), head.decode("latin-1"), body


def raw_upload_head(token, length, content_type="image/png"):
    lines = ["POST /api/v1/media HTTP/1.1", "Host: test", f"Content-Type: {content_type}",
             f"Content-Length: {length}"]
    if token is not None:
        lines.append(f"Authorization: Bearer {token}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


@pytest.mark.parametrize("content_type", sorted(SAMPLES))
def test_each_accepted_type_is_stored_and_served_with_its_headers(start_server, content_type):
    server = admin_server(start_server)
    _, token, user = signup(server, "alice")
    body = SAMPLES[content_type]
    status, reply = upload(server, token, body, content_type)
    assert status == 201, reply
    media_id = reply["id"]
    assert reply == {"id": media_id, "url": f"/media/{media_id}", "type": content_type, "bytes": len(body)}
    assert len(media_id) == 42
    status, headers, served = request(server, "GET", reply["url"])
    assert status == 200 and served == body
    assert headers["Content-Type"] == content_type
    assert headers["Content-Length"] == str(len(body))
    assert headers["ETag"] == f'"{media_id}"'
    assert "immutable" in headers["Cache-Control"] and "max-age=31536000" in headers["Cache-Control"]
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert "sandbox" in headers["Content-Security-Policy"]
    status, head_headers, empty = request(server, "HEAD", reply["url"])
    assert status == 200 and empty == b"" and head_headers["Content-Length"] == str(len(body))
    assert head_headers["Content-Type"] == content_type
    status, _, _ = request(server, "GET", reply["url"], headers={"If-None-Match": f'"{media_id}"'})
    assert status == 304
    status, _, tree = request(server, "GET", f"/api/v1/tree/Media/{media_id}",
                              headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    record = json.loads(tree)
    assert status == 200 and record["owner"] == user["id"] and record["type"] == content_type
    assert record["bytes"] == len(body) and record["createdAt"] > 0


def test_a_disguised_file_is_served_only_as_the_image_it_claims(start_server):
    server = start_server()
    _, token, _ = signup(server, "mallory")
    disguised = png()[:8] + b"<html><script>alert(document.cookie)</script></html>"
    status, reply = upload(server, token, disguised, "image/png")
    assert status == 201
    status, headers, served = request(server, "GET", reply["url"])
    assert status == 200 and served == disguised
    assert headers["Content-Type"] == "image/png"
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert "sandbox" in headers["Content-Security-Policy"]


def test_what_is_not_an_accepted_image_gets_415(start_server):
    server = start_server()
    _, token, _ = signup(server, "alice")
    html = b"<html><script>alert(1)</script></html>"
    assert upload(server, token, html, "text/html")[0] == 415
    status, reply = upload(server, token, html, "image/png")
    assert status == 415 and reply["error"] == "unsupported_media_type"
    assert upload(server, token, png(), "image/jpeg")[0] == 415, "PNG bytes named JPEG"
    assert upload(server, token, SAMPLES["image/gif"], "image/svg+xml")[0] == 415


def test_an_oversized_body_gets_413_before_it_is_read(start_server):
    server = start_server(env={"SWITCHBOARD_MAX_UPLOAD_BYTES": "100000"})
    _, token, _ = signup(server, "alice")
    with socket.create_connection(("127.0.0.1", server.port), timeout=PATIENCE) as sock:
        # Only the head is sent: the answer comes without waiting for a byte of the body.
        sock.sendall(raw_upload_head(token, 100001))
        status, head, body = read_response(sock)
    assert status == 413 and "Connection: close" in head and json.loads(body)["error"] == "too_large"
    # A client that sends the whole body anyway still reads the 413, and the server goes on.
    assert upload(server, token, image_of_size(300000))[0] == 413
    assert upload(server, token, image_of_size(100000))[0] == 201


def test_a_body_that_stops_half_way_gets_408_at_the_deadline(start_server):
    server = start_server(env={"SWITCHBOARD_UPLOAD_TIMEOUT": "1"})
    _, token, _ = signup(server, "alice")
    body = image_of_size(20000)
    with socket.create_connection(("127.0.0.1", server.port), timeout=PATIENCE) as sock:
        sock.sendall(raw_upload_head(token, len(body)) + body[:10000])
        status, head, _ = read_response(sock)
    assert status == 408 and "Connection: close" in head
    # The next upload goes through: the stopped one holds nothing back. It has the same 1 s
    # deadline, which a stall of the machine can miss too: only such a miss is tried again.
    deadline = time.monotonic() + PATIENCE
    while (status := upload(server, token, body)[0]) == 408 and time.monotonic() < deadline:
        pass
    assert status == 201


def test_uploads_need_a_valid_session_token(start_server):
    server = start_server()
    client, token, _ = signup(server, "alice")
    assert upload(server, None, png())[0] == 401
    status, reply = upload(server, "not-a-token", png())
    assert status == 401 and reply["error"] == "unauthorized"
    with socket.create_connection(("127.0.0.1", server.port), timeout=PATIENCE) as sock:
        # Refused from the head: a stranger cannot make the server take in 10 MiB.
        sock.sendall(raw_upload_head(None, 10 * 1024 * 1024))
        status, head, _ = read_response(sock)
    assert status == 401 and "WWW-Authenticate: Bearer" in head
    client.ok("logout")
    assert upload(server, token, png())[0] == 401, "a revoked token still uploads"


def test_uploads_on_every_loop_are_checked_before_their_body_is_read(start_server):
    """With four event loops, connections land on each in turn. On a loop other than the chat
    loop an upload's head is checked there while its own loop holds the body unread: admitted,
    it goes through; refused, the client is answered whatever body it pushes."""
    server = start_server(env={"SWITCHBOARD_THREADS": "4"})
    _, token, _ = signup(server, "alice")
    # Larger than one read (256 KiB), so the body cannot all come in with the head.
    body = image_of_size(1_000_000)
    for _ in range(8):
        status, reply = upload(server, token, body)
        assert status == 201, reply
    for _ in range(8):
        with socket.create_connection(("127.0.0.1", server.port), timeout=PATIENCE) as sock:
            sock.sendall(raw_upload_head("not-a-token", len(body)) + body)
            sock.shutdown(socket.SHUT_WR)
            status, head, reply = read_response(sock)
        assert status == 401 and "Connection: close" in head and json.loads(reply)["error"] == "unauthorized"


def test_the_quota_is_per_user_and_counts_deletes(start_server):
    server = start_server(env={"SWITCHBOARD_MEDIA_QUOTA_BYTES": "5000"})
    _, alice, _ = signup(server, "alice")
    _, bob, _ = signup(server, "bob")
    status, first = upload(server, alice, image_of_size(3000))
    assert status == 201
    status, reply = upload(server, alice, image_of_size(3000))
    assert status == 413 and reply["error"] == "too_large" and "quota" in reply["message"]
    with socket.create_connection(("127.0.0.1", server.port), timeout=PATIENCE) as sock:
        sock.sendall(raw_upload_head(alice, 3000))
        assert read_response(sock)[0] == 413, "the quota is not checked from the head"
    assert upload(server, bob, image_of_size(3000))[0] == 201, "one user's quota is not another's"
    assert request(server, "DELETE", f"/api/v1/media/{first['id']}",
                   headers={"Authorization": f"Bearer {alice}"})[0] == 204
    assert upload(server, alice, image_of_size(3000))[0] == 201, "a deleted file still counted"


def test_uploads_per_minute_are_limited_per_user(start_server):
    server = start_server(env={"SWITCHBOARD_UPLOADS_PER_MINUTE": "1"})
    _, alice, _ = signup(server, "alice")
    _, bob, _ = signup(server, "bob")
    assert upload(server, alice, png())[0] == 201
    status, reply = upload(server, alice, png())
    assert status == 429 and reply["error"] == "rate_limited"
    assert upload(server, bob, png())[0] == 201


def test_only_the_owner_deletes_and_then_the_file_is_gone(start_server):
    server = start_server()
    _, alice, _ = signup(server, "alice")
    _, bob, _ = signup(server, "bob")
    _, reply = upload(server, alice, png())
    path = f"/api/v1/media/{reply['id']}"
    assert request(server, "DELETE", path)[0] == 401
    assert request(server, "DELETE", path, headers={"Authorization": f"Bearer {bob}"})[0] == 403
    assert request(server, "GET", reply["url"])[0] == 200
    assert request(server, "DELETE", path, headers={"Authorization": f"Bearer {alice}"})[0] == 204
    assert request(server, "GET", reply["url"])[0] == 404
    assert request(server, "DELETE", path, headers={"Authorization": f"Bearer {alice}"})[0] == 404
    assert request(server, "GET", "/media/../../etc/passwd")[0] == 404
    assert request(server, "GET", "/media/" + "a" * 42)[0] == 404


def test_messages_and_avatars_take_media_urls(start_server):
    server = start_server()
    alice, token, _ = signup(server, "alice")
    bob, _, _ = signup(server, "bob")
    group = group_with(alice, bob)
    bob.subscribe(group)
    _, reply = upload(server, token, png())
    message = alice.ok("send", group=group, imageUrl=reply["url"])["message"]
    assert message["imageUrl"] == reply["url"]
    assert bob.expect_event("message", group=group)["message"]["imageUrl"] == reply["url"]
    absolute = f"http://127.0.0.1:{server.port}{reply['url']}"
    assert alice.ok("send", group=group, imageUrl=absolute)["message"]["imageUrl"] == absolute
    assert alice.ok("profile", avatar=reply["url"])["user"]["avatar"] == reply["url"]
    assert alice.error("send", group=group, imageUrl="/media/" + "a" * 42)["code"] == "bad_request"
    assert alice.error("profile", avatar="/etc/passwd")["code"] == "bad_request"


def test_an_answered_upload_survives_kill_9(start_server, tmp_path):
    server = start_server(data=str(tmp_path))
    _, token, _ = signup(server, "alice")
    body = image_of_size(500000)
    status, reply = upload(server, token, body)
    assert status == 201
    server.stop(signal.SIGKILL)
    # What a crash can leave beside the files: a temporary file, and a file whose record never
    # became durable. Both go at the next start.
    media = tmp_path / "media"
    (media / "half-written.tmp").write_bytes(b"x")
    (media / "no-record").write_bytes(b"x")
    again = start_server(data=str(tmp_path))
    status, _, served = request(again, "GET", reply["url"])
    assert status == 200 and served == body
    assert sorted(os.listdir(media)) == [reply["id"]]
    alice = connect_as(again, token)
    assert alice.ok("profile", avatar=reply["url"])["user"]["avatar"] == reply["url"]
