"""/ws groups: create, groups, invite, join, leave, direct, and who may touch a group
(docs/protocol.md, "Operations" and "Every group operation by a non-member gets `forbidden`")."""

import time

from chat_client import ChatClient, fake_id, group_with, signup

GROUP_FIELDS = {"id", "name", "createdBy", "createdAt", "members", "online"}


def test_create_makes_the_caller_the_first_member(server):
    alice, _, user = signup(server, "alice")
    before = int(time.time() * 1000)
    group = alice.ok("create", name="book club")["group"]
    assert GROUP_FIELDS <= set(group), group
    assert isinstance(group["id"], str) and len(group["id"]) == 20
    assert group["name"] == "book club"
    assert group["createdBy"] == user["id"]
    assert group["members"] == [user["id"]]
    # createdAt is milliseconds since the epoch (a wide window: this is not about speed).
    assert abs(group["createdAt"] - before) < 60_000
    # Members see the invite.
    assert isinstance(group.get("invite"), str) and group["invite"]


def test_groups_lists_latest_activity_first_with_the_last_message(server):
    alice, _, _ = signup(server, "alice")
    first = alice.ok("create", name="first")["group"]["id"]
    second = alice.ok("create", name="second")["group"]["id"]
    summaries = alice.ok("groups")["groups"]
    assert {s["id"] for s in summaries} == {first, second}
    for summary in summaries:
        assert {"id", "name", "members", "online", "lastMessage"} <= set(summary), summary
        assert summary["lastMessage"] is None
        assert summary["members"] == 1
    sent = alice.send_text(first, "hello first")
    summaries = alice.ok("groups")["groups"]
    assert [s["id"] for s in summaries] == [first, second]
    assert summaries[0]["lastMessage"]["id"] == sent["id"]
    assert summaries[0]["lastMessage"]["text"] == "hello first"
    assert summaries[0]["name"] == "first"
    alice.send_text(second, "now second")
    later = alice.send_text(second, "second again")
    summaries = alice.ok("groups")["groups"]
    assert [s["id"] for s in summaries] == [second, first]
    assert summaries[0]["lastMessage"]["id"] == later["id"]


def test_groups_lists_only_the_callers_groups(server):
    alice, _, _ = signup(server, "alice")
    bob, _, _ = signup(server, "bob")
    alice.ok("create", name="alice only")
    assert bob.ok("groups")["groups"] == []


def test_invite_gives_a_join_url_to_members_only(server):
    alice, _, _ = signup(server, "alice")
    bob, _, _ = signup(server, "bob")
    group = alice.ok("create", name="club")["group"]["id"]
    reply = alice.ok("invite", group=group)
    assert isinstance(reply["invite"], str) and reply["invite"]
    # "/join/<invite> on this server": absolute or relative, it ends with that path.
    assert reply["url"].endswith("/join/" + reply["invite"])
    assert bob.code("invite", group=group) == "forbidden"


def test_join_by_invite_adds_the_member_and_tells_subscribers(server):
    alice, _, alice_user = signup(server, "alice")
    bob, _, bob_user = signup(server, "bob")
    group = alice.ok("create", name="club")["group"]["id"]
    alice.subscribe(group)
    invite = alice.ok("invite", group=group)["invite"]
    joined = bob.ok("join", invite=invite)["group"]
    assert joined["id"] == group
    assert sorted(joined["members"]) == sorted([alice_user["id"], bob_user["id"]])
    event = alice.expect_event("member", group=group, user=bob_user["id"])
    assert event["action"] == "joined"
    # Bob is a member now: he can subscribe, send and see the group in his list.
    bob.subscribe(group)
    bob.send_text(group, "hi all")
    assert [s["id"] for s in bob.ok("groups")["groups"]] == [group]
    assert alice.ok("groups")["groups"][0]["members"] == 2


def test_join_with_an_unknown_invite_fails(server):
    bob, _, _ = signup(server, "bob")
    # The code is not fixed by the spec (not_found is the natural one); it must be an error.
    bob.error("join", invite="no-such-invite")
    assert bob.ok("groups")["groups"] == []


def test_leave_removes_the_member_and_tells_subscribers(server):
    alice, _, _ = signup(server, "alice")
    bob, _, bob_user = signup(server, "bob")
    group = group_with(alice, bob)
    alice.subscribe(group)
    bob.ok("leave", group=group)
    event = alice.expect_event("member", group=group, user=bob_user["id"], action="left")
    assert event["group"] == group
    assert bob.ok("groups")["groups"] == []
    assert bob.code("send", group=group, text="still here?") == "forbidden"
    assert bob.code("subscribe", group=group) == "forbidden"
    assert alice.subscribe(group)["group"]["members"] == [alice.user["id"]]


def test_direct_is_the_same_group_from_both_sides(server):
    alice, _, alice_user = signup(server, "alice")
    bob, _, bob_user = signup(server, "bob")
    carol, _, _ = signup(server, "carol")
    from_alice = alice.ok("direct", user=bob_user["id"])["group"]
    from_bob = bob.ok("direct", user=alice_user["id"])["group"]
    assert from_alice["id"] == from_bob["id"]
    assert sorted(from_alice["members"]) == sorted([alice_user["id"], bob_user["id"]])
    assert alice.ok("direct", user=bob_user["id"])["group"]["id"] == from_alice["id"]
    # A third user is no member of it.
    assert carol.code("history", group=from_alice["id"]) == "forbidden"
    # Both ends can use it.
    bob.subscribe(from_alice["id"])
    alice.send_text(from_alice["id"], "psst")
    assert bob.expect_event("message", group=from_alice["id"])["message"]["text"] == "psst"


def test_direct_to_an_unknown_user_is_not_found(server):
    alice, _, _ = signup(server, "alice")
    assert alice.code("direct", user=fake_id()) == "not_found"


def test_non_members_are_forbidden_every_group_operation(server):
    alice, _, _ = signup(server, "alice")
    mallory, _, _ = signup(server, "mallory")
    group = alice.ok("create", name="private")["group"]["id"]
    message = alice.send_text(group, "secret")["id"]
    alice.subscribe(group)
    assert mallory.code("subscribe", group=group) == "forbidden"
    assert mallory.code("send", group=group, text="let me in") == "forbidden"
    assert mallory.code("history", group=group) == "forbidden"
    assert mallory.code("invite", group=group) == "forbidden"
    assert mallory.code("receipt", group=group, message=message) == "forbidden"
    assert mallory.code("typing", group=group) == "forbidden"
    # Nothing of it reached the members either.
    alice.no_event("message", within=0.5)
    alice.no_event("typing", within=0.1)
    history = alice.ok("history", group=group, limit=10)["messages"]
    assert [m["text"] for m in history] == ["secret"]
    assert "secret" not in "".join(mallory.transcript)


def test_unknown_group_is_not_found(server):
    alice, _, _ = signup(server, "alice")
    missing = fake_id()
    for op, args in [("subscribe", {}), ("send", {"text": "hi"}), ("history", {}),
                     ("invite", {}), ("receipt", {"message": fake_id()}), ("typing", {}),
                     ("leave", {}), ("unsubscribe", {})]:
        assert alice.code(op, group=missing, **args) == "not_found", op


def test_a_group_reply_shows_members_and_invite_to_a_member(server):
    alice, _, alice_user = signup(server, "alice")
    bob, _, bob_user = signup(server, "bob")
    group = group_with(alice, bob, name="pair")
    reply = bob.subscribe(group)["group"]
    assert reply["id"] == group and reply["name"] == "pair"
    assert sorted(reply["members"]) == sorted([alice_user["id"], bob_user["id"]])
    assert reply["createdBy"] == alice_user["id"]
    assert isinstance(reply.get("invite"), str)


def test_a_fresh_connection_sees_groups_after_auth(server):
    alice, token, _ = signup(server, "alice")
    group = alice.ok("create", name="kept")["group"]["id"]
    other = ChatClient(server, token=token)
    assert [s["id"] for s in other.ok("groups")["groups"]] == [group]
