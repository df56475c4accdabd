"""The server-side publish API (docs/operations.md, "Publish API"): POST /api/v1/rooms/{room}/messages
relays to a plain room, POST /api/v1/groups/{id}/messages stores a message from a named system
sender and answers once it is durable; both need the admin token."""

import http.client
import json

from chat_client import connect_as, group_with, signup
from conftest import PATIENCE, connect
from sse_client import ADMIN_TOKEN, admin_server

ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


def call(server, method, path, body=b"", headers=None):
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=PATIENCE)
    connection.request(method, path, body=body, headers=headers or {})
    response = connection.getresponse()
    payload = response.read()
    connection.close()
    return response.status, json.loads(payload) if payload else None


def test_a_group_message_is_stored_delivered_and_in_history(start_server, tmp_path):
    server = admin_server(start_server, data=str(tmp_path))
    alice, _, _ = signup(server, "alice")
    bob, bob_token, _ = signup(server, "bob")
    group = group_with(alice, bob)
    bob.subscribe(group)
    body = json.dumps({"text": "deploy finished", "sender": "ci", "clientId": "build-7"}).encode()
    status, reply = call(server, "POST", f"/api/v1/groups/{group}/messages", body, ADMIN)
    assert status == 201
    message = reply["message"]
    assert message["user"] == "system:ci" and message["text"] == "deploy finished" and message["group"] == group
    event = bob.expect_event("message", group=group)
    assert event["message"]["id"] == message["id"]
    assert [m["id"] for m in alice.ok("history", group=group)["messages"]] == [message["id"]]
    # A retry with the same clientId (say, after a lost answer) gets the stored message back.
    status, retried = call(server, "POST", f"/api/v1/groups/{group}/messages", body, ADMIN)
    assert status == 201 and retried["message"] == message
    assert [m["id"] for m in alice.ok("history", group=group)["messages"]] == [message["id"]]
    # Acknowledged means durable: it is there after a restart.
    server.stop()
    again = admin_server(start_server, data=str(tmp_path))
    bob_again = connect_as(again, bob_token)
    assert [m["text"] for m in bob_again.ok("history", group=group)["messages"]] == ["deploy finished"]


def test_group_publish_is_refused_without_the_token_and_checks_its_body(start_server):
    server = admin_server(start_server)
    alice, _, _ = signup(server, "alice")
    group = group_with(alice)
    path = f"/api/v1/groups/{group}/messages"
    assert call(server, "POST", path, b'{"text":"x"}')[0] == 403
    assert call(server, "POST", path, b'{"text":"x"}', {"Authorization": "Bearer " + "n" * 40})[0] == 403
    assert call(server, "POST", path, b'{"text":"x","sender":"no spaces"}', ADMIN)[0] == 400
    assert call(server, "POST", path, b'not json', ADMIN)[0] == 400
    assert call(server, "POST", "/api/v1/groups/nope/messages", b'{"text":"x"}', ADMIN)[0] == 404
    assert call(server, "GET", path)[0] == 405
    assert alice.ok("history", group=group)["messages"] == []


def test_a_room_message_reaches_every_member_and_needs_the_token(start_server):
    server = admin_server(start_server)
    with connect(server.ws + "/rooms/news?notices=0") as a, connect(server.ws + "/rooms/news?notices=0") as b:
        assert call(server, "POST", "/api/v1/rooms/news/messages", b"refused")[0] == 403
        status, reply = call(server, "POST", "/api/v1/rooms/news/messages", "héllo".encode(), ADMIN)
        assert status == 200 and reply == {"room": "news", "delivered": 2}
        assert a.recv(timeout=PATIENCE) == "héllo", "the refused message was never relayed"
        assert b.recv(timeout=PATIENCE) == "héllo"
    assert call(server, "POST", "/api/v1/rooms/bad%20name/messages", b"x", ADMIN)[0] == 400


def test_bodies_are_bounded_and_chunked_ones_refused(start_server):
    server = admin_server(start_server)
    status, reply = call(server, "POST", "/api/v1/rooms/news/messages", b"x" * (64 * 1024 + 1), ADMIN)
    assert status == 413 and reply["error"] == "too_large"
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=PATIENCE)
    connection.request("POST", "/api/v1/rooms/news/messages", body=iter([b"chunk"]), headers=ADMIN,
                       encode_chunked=True)
    assert connection.getresponse().status == 411
    connection.close()
