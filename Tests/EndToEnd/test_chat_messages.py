"""/ws messages: send, fan-out, image URLs, history and subscribe paging, receipts, typing
(docs/protocol.md, operations `subscribe` to `typing`, and "Events")."""

import time

import pytest

from chat_client import connect_as, fake_id, group_with, send_many, signup


@pytest.fixture
def busy_server(start_server):
    """A server whose per-connection and per-user rate limits (default 100 a second) do not get in
    the way of a test that pipelines hundreds of sends to fill a history quickly."""
    return start_server(env={"SWITCHBOARD_MESSAGES_PER_SECOND": "1000000",
                             "SWITCHBOARD_USER_MESSAGES_PER_SECOND": "1000000"})


def test_send_acknowledges_a_message_and_other_subscribers_get_it(server):
    alice, token, alice_user = signup(server, "alice")
    bob, _, _ = signup(server, "bob")
    carol, _, _ = signup(server, "carol")
    group = group_with(alice, bob, carol)
    alice_again = connect_as(server, token)
    for client in (alice, bob, carol, alice_again):
        client.subscribe(group)
    before = int(time.time() * 1000)
    message = alice.ok("send", group=group, text="hello, world", clientId="local-1")["message"]
    assert isinstance(message["id"], str) and len(message["id"]) == 20
    assert message["group"] == group
    assert message["user"] == alice_user["id"]
    assert message["text"] == "hello, world"
    assert message.get("imageUrl") is None
    assert message["clientId"] == "local-1"
    # Milliseconds since the epoch; the window is wide on purpose (not a speed check).
    assert abs(message["createdAt"] - before) < 60_000
    for client in (bob, carol, alice_again):
        event = client.expect_event("message", group=group)
        assert event["message"]["id"] == message["id"]
        assert event["message"]["text"] == "hello, world"
        assert event["message"]["user"] == alice_user["id"]
    # Every subscribed connection except the sending one: alice's other connection got it above.
    alice.no_event("message", within=0.5)


def test_members_who_did_not_subscribe_get_no_events(server):
    alice, _, _ = signup(server, "alice")
    bob, _, _ = signup(server, "bob")
    group = group_with(alice, bob)
    alice.send_text(group, "anyone?")
    bob.no_event("message", within=0.5)
    # But it is in the history.
    assert [m["text"] for m in bob.ok("history", group=group)["messages"]] == ["anyone?"]


def test_message_ids_sort_by_creation(busy_server):
    server = busy_server
    alice, _, _ = signup(server, "alice")
    group = group_with(alice)
    messages = send_many(alice, group, [f"m{i}" for i in range(30)])
    ids = [m["id"] for m in messages]
    assert ids == sorted(ids)
    assert len(set(ids)) == 30


def test_http_and_https_image_urls_are_accepted(server):
    alice, _, _ = signup(server, "alice")
    bob, _, _ = signup(server, "bob")
    group = group_with(alice, bob)
    bob.subscribe(group)
    for url in ["http://example.test/cat.png", "https://example.test/dog.jpg?size=2"]:
        message = alice.ok("send", group=group, imageUrl=url)["message"]
        assert message["imageUrl"] == url
        assert message.get("text") is None
        assert bob.expect_event("message", group=group)["message"]["imageUrl"] == url


def test_other_image_url_schemes_are_bad_requests(server):
    alice, _, _ = signup(server, "alice")
    bob, _, _ = signup(server, "bob")
    group = group_with(alice, bob)
    bob.subscribe(group)
    for url in ["javascript:alert(1)", "JavaScript:alert(1)", "ftp://example.test/x.png",
                "data:image/png;base64,AAAA", "not a url"]:
        assert alice.code("send", group=group, imageUrl=url) == "bad_request", url
    bob.no_event("message", within=0.5)
    assert alice.ok("history", group=group)["messages"] == []


def test_a_send_needs_exactly_one_of_text_and_image(server):
    alice, _, _ = signup(server, "alice")
    group = group_with(alice)
    assert alice.code("send", group=group) == "bad_request"
    # A Message carries exactly one of text / imageUrl, so both at once cannot be stored.
    assert alice.code("send", group=group, text="x", imageUrl="https://example.test/a.png") == "bad_request"


def ids_of(messages):
    return [m["id"] for m in messages]


def test_history_pages_back_and_forth_through_120_messages(busy_server):
    server = busy_server
    alice, _, _ = signup(server, "alice")
    bob, _, _ = signup(server, "bob")
    group = group_with(alice, bob)
    ids = ids_of(send_many(alice, group, [f"message {i}" for i in range(120)]))

    latest = bob.ok("history", group=group, limit=50)
    assert ids_of(latest["messages"]) == ids[70:]
    assert latest["more"] is True
    assert [m["text"] for m in latest["messages"]][-1] == "message 119"

    older = bob.ok("history", group=group, before=ids[70], limit=50)
    assert ids_of(older["messages"]) == ids[20:70]
    assert older["more"] is True
    first = bob.ok("history", group=group, before=ids[20], limit=50)
    assert ids_of(first["messages"]) == ids[:20]
    assert first["more"] is False

    forward = bob.ok("history", group=group, after=ids[9], limit=50)
    assert ids_of(forward["messages"]) == ids[10:60]
    assert forward["more"] is True
    forward = bob.ok("history", group=group, after=ids[59], limit=50)
    assert ids_of(forward["messages"]) == ids[60:110]
    assert forward["more"] is True
    last = bob.ok("history", group=group, after=ids[109], limit=50)
    assert ids_of(last["messages"]) == ids[110:]
    assert last["more"] is False
    beyond = bob.ok("history", group=group, after=ids[-1], limit=50)
    assert beyond["messages"] == [] and beyond["more"] is False


def test_subscribe_returns_the_latest_or_everything_after_since(busy_server):
    server = busy_server
    alice, _, _ = signup(server, "alice")
    bob, _, _ = signup(server, "bob")
    group = group_with(alice, bob)
    ids = ids_of(send_many(alice, group, [f"message {i}" for i in range(120)]))

    plain = bob.subscribe(group)
    assert ids_of(plain["messages"]) == ids[70:], "default limit is 50, the latest ones"
    assert plain["more"] is True

    caught_up = bob.subscribe(group, since=ids[-1])
    assert caught_up["messages"] == []
    assert caught_up["more"] is False

    behind = bob.subscribe(group, since=ids[99])
    assert ids_of(behind["messages"]) == ids[100:]
    assert behind["more"] is False

    # More than `limit` came after `since`: a reconnecting client misses nothing, so it gets the
    # oldest ones after `since` and pages forward with history `after` (the spec's "more").
    far_behind = bob.subscribe(group, since=ids[9], limit=20)
    assert ids_of(far_behind["messages"]) == ids[10:30]
    assert far_behind["more"] is True
    rest = bob.ok("history", group=group, after=ids[29], limit=200)
    assert ids_of(rest["messages"]) == ids[30:]


def test_limits_above_200_are_capped_or_refused(busy_server):
    server = busy_server
    alice, _, _ = signup(server, "alice")
    group = group_with(alice)
    ids = ids_of(send_many(alice, group, [f"m{i}" for i in range(230)]))
    # The spec says "max 200" without saying whether a larger limit is cut down or refused.
    for op in ("history", "subscribe"):
        reply = alice.request(op, group=group, limit=1000)
        if reply["op"] == "error":
            assert reply["code"] == "bad_request", reply
        else:
            assert ids_of(reply["messages"]) == ids[30:], op
            assert reply["more"] is True
    full = alice.ok("history", group=group, limit=200)
    assert ids_of(full["messages"]) == ids[30:]
    assert full["more"] is True


def test_receipt_is_stored_and_told_to_subscribers(server):
    alice, _, _ = signup(server, "alice")
    bob, _, bob_user = signup(server, "bob")
    group = group_with(alice, bob)
    alice.subscribe(group)
    bob.subscribe(group)
    message = alice.send_text(group, "did you get this?")
    bob.expect_event("message", group=group)
    bob.ok("receipt", group=group, message=message["id"])
    event = alice.expect_event("receipt", group=group, message=message["id"])
    assert event["user"] == bob_user["id"]
    assert isinstance(event["at"], int) and event["at"] >= message["createdAt"] - 60_000
    stored = alice.ok("history", group=group)["messages"]
    assert stored[-1]["id"] == message["id"]
    assert stored[-1]["receivedBy"] == {bob_user["id"]: event["at"]}


def test_receipt_for_an_unknown_message_is_not_found(server):
    alice, _, _ = signup(server, "alice")
    group = group_with(alice)
    alice.send_text(group, "real")
    assert alice.code("receipt", group=group, message=fake_id()) == "not_found"


def test_typing_reaches_the_other_subscribers_only(server):
    alice, _, alice_user = signup(server, "alice")
    bob, _, _ = signup(server, "bob")
    carol, _, _ = signup(server, "carol")
    group = group_with(alice, bob, carol)
    for client in (alice, bob, carol):
        client.subscribe(group)
    alice.ok("typing", group=group)
    for client in (bob, carol):
        event = client.expect_event("typing", group=group)
        assert event["user"] == alice_user["id"]
    alice.no_event("typing", within=0.5)
    # Typing is not stored.
    assert alice.ok("history", group=group)["messages"] == []


def test_unsubscribe_stops_events(server):
    alice, _, _ = signup(server, "alice")
    bob, _, _ = signup(server, "bob")
    group = group_with(alice, bob)
    bob.subscribe(group)
    alice.send_text(group, "one")
    bob.expect_event("message", group=group)
    bob.ok("unsubscribe", group=group)
    alice.send_text(group, "two")
    bob.no_event("message", within=0.5)
