"""GET /api/v1/presence/stream: a snapshot, then folded presence changes of chat groups and plain
rooms as Server-Sent Events with ids, resumable by Last-Event-ID, for admins only
(docs/operations.md, "The presence stream")."""

import json
import socket
import time
import urllib.error
import urllib.request

from chat_client import group_with, signup
from conftest import PATIENCE, connect
from sse_client import ADMIN_TOKEN, EventStream, admin_server, has
from wsraw import RawClient


def post(server, path, headers=None, body=b""):
    request = urllib.request.Request(server.http + path, data=body, method="POST", headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=PATIENCE) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_snapshot_then_group_and_room_changes(start_server):
    server = admin_server(start_server)
    alice, _, alice_user = signup(server, "alice")
    bob, _, bob_user = signup(server, "bob")
    group = group_with(alice, bob, name="Team")
    alice.subscribe(group)
    stream = EventStream(server)
    assert stream.status == 200
    assert stream.response.getheader("Content-Type").startswith("text/event-stream")
    snapshot = stream.next_event()
    assert snapshot["event"] == "snapshot"
    assert snapshot["data"]["groups"] == [{"id": group, "name": "Team", "online": 1, "users": [alice_user["id"]]}]
    assert snapshot["data"]["rooms"] == []

    bob.subscribe(group)
    # Alice's own join may fold into this change (changes are sets, see docs/operations.md).
    change = stream.expect("presence", group=group, joined=has(bob_user["id"]))
    assert change["data"]["name"] == "Team"
    assert change["data"]["online"] == 2 and change["data"]["left"] == []

    with connect(server.ws + "/rooms/lobby?name=ann&notices=0"):
        change = stream.expect("presence", room="lobby", joined=has("ann"))
        assert change["data"]["online"] == 1
    assert stream.expect("presence", room="lobby", left=has("ann"))["data"]["online"] == 0

    bob.close()
    assert stream.expect("presence", group=group, left=has(bob_user["id"]))["data"]["online"] == 1
    ids = [event["id"] for event in stream.seen]
    assert len(set(ids)) == len(ids), "every event has its own id"
    assert all(event_id.split("-")[0] == ids[0].split("-")[0] for event_id in ids)
    stream.close()


def test_a_client_killed_without_closing_leaves_within_the_idle_timeout(start_server):
    server = admin_server(start_server)
    stream = EventStream(server)
    stream.expect("snapshot")
    ghost = RawClient(server.port, path="/rooms/lobby?name=ghost&notices=0")
    assert ghost.status == 101
    stream.expect("presence", room="lobby", joined=has("ghost"))
    # From here the raw client reads nothing and answers no ping: the idle timeout (3 s) ends it.
    assert stream.expect("presence", room="lobby", left=has("ghost"))["data"]["online"] == 0
    ghost.close()
    stream.close()


def test_resume_by_last_event_id_replays_what_was_missed(start_server):
    server = admin_server(start_server)
    first = EventStream(server)
    first.expect("snapshot")
    with connect(server.ws + "/rooms/a?name=ann&notices=0"):
        seen = first.expect("presence", room="a", joined=has("ann"))
    first.close()
    # Missed while disconnected: ann leaves a, bea joins b.
    with connect(server.ws + "/rooms/b?name=bea&notices=0"):
        watcher = EventStream(server)
        watcher.expect("presence", room="b", joined=has("bea"))
        watcher.close()
        resumed = EventStream(server, last_event_id=seen["id"])
        replayed = [resumed.next_event(), resumed.next_event()]
        assert [event["event"] for event in replayed] == ["presence", "presence"], "no snapshot when resuming"
        assert {(event["data"]["room"], tuple(event["data"]["left"] or event["data"]["joined"])) for event in replayed} \
            == {("a", ("ann",)), ("b", ("bea",))}
        resumed.close()


def test_an_unknown_last_event_id_gets_a_fresh_snapshot(start_server):
    server = admin_server(start_server)
    stream = EventStream(server, last_event_id="12345-1")
    assert stream.next_event()["event"] == "snapshot"
    stream.close()


def test_refused_without_the_admin_token(start_server):
    server = admin_server(start_server)
    for token in (None, "wrong-token-of-enough-length-0123456789"):
        stream = EventStream(server, admin_token=token)
        assert stream.status == 403
        assert json.loads(stream.response.read())["error"] == "forbidden"
        stream.close()
    assert EventStream(server, admin_token=None, query="?token=123.abc").status == 403
    assert post(server, "/api/v1/presence/token")[0] == 403
    unconfigured = start_server()
    assert EventStream(unconfigured, admin_token=ADMIN_TOKEN).status == 403


def test_a_stream_token_in_the_query_opens_the_stream_and_is_never_logged(start_server):
    server = admin_server(start_server, "--log-level", "trace")
    status, body = post(server, "/api/v1/presence/token", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    assert status == 200 and body["expiresIn"] == 60
    stream = EventStream(server, admin_token=None, query=f"?token={body['token']}")
    assert stream.status == 200
    assert stream.next_event()["event"] == "snapshot"
    stream.close()
    server.stop()
    log = server.log()
    assert body["token"].split(".")[1] not in log
    assert ADMIN_TOKEN not in log


def test_a_heartbeat_comment_arrives_while_nothing_changes(start_server):
    server = admin_server(start_server, env={"SWITCHBOARD_HEARTBEAT_INTERVAL": "0.2"})
    stream = EventStream(server)
    assert stream.next_event()["event"] == "snapshot"
    # Nobody connects, so the next line with content can only be the heartbeat.
    line = b""
    while line.strip() == b"":
        line = stream.response.readline()
    assert line == b": heartbeat\n"
    assert stream.seen[-1]["event"] == "snapshot"
    stream.close()


def metric_value(server, sample):
    with urllib.request.urlopen(server.http + "/metrics", timeout=PATIENCE) as response:
        for line in response.read().decode().splitlines():
            if line.startswith(sample + " "):
                return int(line.split()[-1])
    return 0


def test_a_stream_reader_that_stops_reading_is_closed_by_the_outbound_limit(start_server):
    # A 4 KiB outbound limit (and messages small enough not to raise it), and the default idle
    # timeout, so it is the limit that ends the stream, not the stall check.
    server = start_server(env={"SWITCHBOARD_ADMIN_TOKEN": ADMIN_TOKEN, "SWITCHBOARD_OUTBOUND_QUEUE_BYTES": "4096",
                               "SWITCHBOARD_MAX_MESSAGE_SIZE": "1024"})
    slow = socket.socket()
    # A small receive buffer and segment size keep what the kernels hold for this reader to tens
    # of kilobytes, so the presence changes below soon reach the server's own queue.
    slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    slow.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, 536)
    slow.settimeout(PATIENCE)
    slow.connect(("127.0.0.1", server.port))
    slow.sendall(f"GET /api/v1/presence/stream HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {ADMIN_TOKEN}\r\n\r\n"
                 .encode())
    closed = 'switchboard_slow_consumers_dropped_total'
    deadline = time.monotonic() + PATIENCE
    round_number = 0
    # Every round, 40 members with long names join a room and leave it: two large changes the
    # reader never reads. The bound only ends a failing test.
    while metric_value(server, closed) == 0:
        assert time.monotonic() < deadline, "the stream's reader was never closed"
        members = [RawClient(server.port, path=f"/rooms/churn?notices=0&name={round_number:05d}-{index:02d}-{'n' * 54}")
                   for index in range(40)]
        for member in members:
            member.close()
        round_number += 1
    assert metric_value(server, closed) == 1
    # What was written before the close still arrives, then the end of the stream.
    received = b""
    while chunk := slow.recv(65536):
        received += chunk
    assert received.startswith(b"HTTP/1.1 200")
    slow.close()
    # The server carries on: a new stream starts with a snapshot.
    fresh = EventStream(server)
    assert fresh.next_event()["event"] == "snapshot"
    fresh.close()
