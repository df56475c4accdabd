"""/ws presence: the `online` list on subscribe and `presence` diffs when it changes, however a
connection ends (docs/protocol.md, "Events": `presence`, and the paragraph after the table).

The `server` fixture runs with --idle-timeout 3 --ping-interval 1, so every "left" must come within
a few seconds; the waits below are bounded at 10-15 s and are not speed checks."""

import json
import socket
import struct

from chat_client import connect_as, group_with, signup
from wsraw import RawClient
from conftest import PATIENCE


def joined(user_id):
    return lambda ids: user_id in ids


def both_subscribed(server):
    """Alice and Bob in one group, both subscribed, once Alice has seen Bob join."""
    alice, _, _ = signup(server, "alice")
    bob, bob_token, bob_user = signup(server, "bob")
    group = group_with(alice, bob)
    alice.subscribe(group)
    bob.subscribe(group)
    event = alice.expect_event("presence", group=group, joined=joined(bob_user["id"]))
    return alice, bob, bob_token, bob_user, group, event


def test_subscribe_returns_the_full_online_list(server):
    alice, _, alice_user = signup(server, "alice")
    bob, _, bob_user = signup(server, "bob")
    carol, _, _ = signup(server, "carol")
    group = group_with(alice, bob, carol)
    assert alice.subscribe(group)["group"]["online"] == [alice_user["id"]]
    online = bob.subscribe(group)["group"]["online"]
    assert sorted(online) == sorted([alice_user["id"], bob_user["id"]])
    # Carol is connected and a member but not subscribed: not online in the group.
    assert carol.user["id"] not in online


def test_a_subscriber_joining_and_closing_cleanly_produces_presence_diffs(server):
    alice, bob, _, bob_user, group, event = both_subscribed(server)
    assert event["online"] == 2
    assert bob_user["id"] not in event.get("left", [])
    bob.close()
    event = alice.expect_event("presence", timeout=PATIENCE, group=group, left=joined(bob_user["id"]))
    assert event["online"] == 1
    assert bob_user["id"] not in event.get("joined", [])


def test_unsubscribe_produces_a_left_diff(server):
    alice, bob, _, bob_user, group, _ = both_subscribed(server)
    bob.ok("unsubscribe", group=group)
    event = alice.expect_event("presence", timeout=PATIENCE, group=group, left=joined(bob_user["id"]))
    assert event["online"] == 1


def test_a_user_stays_online_while_one_of_its_connections_is_subscribed(server):
    alice, bob, bob_token, bob_user, group, _ = both_subscribed(server)
    bob_phone = connect_as(server, bob_token)
    bob_phone.subscribe(group)
    bob.close()
    alice.no_event("presence", within=1.5, left=joined(bob_user["id"]))
    assert sorted(alice.subscribe(group)["group"]["online"]) == sorted([alice.user["id"], bob_user["id"]])
    bob_phone.close()
    event = alice.expect_event("presence", timeout=PATIENCE, group=group, left=joined(bob_user["id"]))
    assert event["online"] == 1


def test_a_tcp_reset_takes_the_user_out_of_the_group(server):
    alice, bob, _, bob_user, group, _ = both_subscribed(server)
    bob.reset()
    event = alice.expect_event("presence", timeout=PATIENCE, group=group, left=joined(bob_user["id"]))
    assert event["online"] == 1


class RawChat(RawClient):
    """A hand-made /ws client that never answers the server's pings."""

    def request(self, body):
        self.send(1, json.dumps(body).encode())
        while True:
            _, opcode, payload = self.recv_frame()
            if opcode == 1:
                frame = json.loads(payload)
                if frame.get("id") == body["id"]:
                    return frame


def test_a_silent_connection_leaves_after_the_idle_timeout(server):
    alice, _, _ = signup(server, "alice")
    bob, bob_token, bob_user = signup(server, "bob")
    group = group_with(alice, bob)
    bob.close()
    alice.subscribe(group)
    silent = RawChat(server.port, path="/ws")
    assert silent.status == 101
    assert silent.request({"op": "auth", "id": 1, "token": bob_token})["op"] == "ok"
    assert silent.request({"op": "subscribe", "id": 2, "group": group})["op"] == "ok"
    alice.expect_event("presence", group=group, joined=joined(bob_user["id"]))
    # From here the raw client reads nothing and answers no ping.
    event = alice.expect_event("presence", timeout=PATIENCE, group=group, left=joined(bob_user["id"]))
    assert event["online"] == 1
    silent.close()


def test_a_raw_client_that_resets_after_subscribing_leaves(server):
    alice, _, _ = signup(server, "alice")
    bob, bob_token, bob_user = signup(server, "bob")
    group = group_with(alice, bob)
    bob.close()
    alice.subscribe(group)
    ghost = RawChat(server.port, path=f"/ws?token={bob_token}")
    assert ghost.status == 101
    assert ghost.request({"op": "subscribe", "id": 1, "group": group})["op"] == "ok"
    alice.expect_event("presence", group=group, joined=joined(bob_user["id"]))
    ghost.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    ghost.sock.close()
    event = alice.expect_event("presence", timeout=PATIENCE, group=group, left=joined(bob_user["id"]))
    assert event["online"] == 1


def test_presence_events_go_to_subscribers_only(server):
    alice, _, _ = signup(server, "alice")
    bob, _, bob_user = signup(server, "bob")
    carol, _, _ = signup(server, "carol")
    group = group_with(alice, bob, carol)
    alice.subscribe(group)
    bob.subscribe(group)
    alice.expect_event("presence", group=group, joined=joined(bob_user["id"]))
    carol.no_event("presence", within=0.5)
