"""/ws accounts: signup, login, auth, logout, ping, profile and the user list
(docs/protocol.md, "The JSON protocol: /ws", operations `signup` to `profile`)."""

import time

import pytest
from websockets.exceptions import InvalidStatus

from chat_client import PASSWORD, ChatClient, connect_as, signup, unique_email
from conftest import PATIENCE

USER_FIELDS = {"id", "name", "avatar", "online"}
PRIVATE_FIELDS = {"email", "password", "passwordHash", "salt"}


def assert_public_user(user, name):
    """A User object: the public fields, never email or a password hash."""
    assert USER_FIELDS <= set(user), f"a User has id, name, avatar, online: {user}"
    assert not PRIVATE_FIELDS & set(user), f"a User never carries credentials: {user}"
    assert user["name"] == name
    assert isinstance(user["id"], str) and len(user["id"]) == 20


def test_signup_returns_a_token_and_a_public_user(server):
    client, token, user = signup(server, "alice", avatar="https://example.test/a.png")
    assert isinstance(token, str) and token
    assert_public_user(user, "alice")
    assert user["avatar"] == "https://example.test/a.png"
    assert client.email not in "".join(client.transcript)
    assert PASSWORD not in "".join(client.transcript)
    # The signing-up connection is authenticated: a member-only operation works.
    assert client.ok("groups")["groups"] == []


def test_signup_without_avatar_has_a_null_avatar(server):
    _, _, user = signup(server, "noavatar")
    assert user["avatar"] is None


def test_signup_with_a_registered_email_is_a_conflict(server):
    first, _, _ = signup(server, "alice")
    other = ChatClient(server)
    assert other.code("signup", email=first.email, password=PASSWORD, name="mallory") == "conflict"


def test_signup_with_a_short_password_is_a_bad_request_that_says_why(server):
    client = ChatClient(server)
    email = unique_email("short")
    reply = client.error("signup", email=email, password="1234567", name="short")
    assert reply["code"] == "bad_request"
    # The wording is open; a message that says what was wrong names the password.
    assert "password" in reply["message"].lower()
    # Nothing was registered: the same email with a good password is not a conflict.
    client.ok("signup", email=email, password="12345678", name="short")


def test_login_returns_a_token_for_the_same_user(server):
    first, _, user = signup(server, "alice")
    client = ChatClient(server)
    reply = client.ok("login", email=first.email, password=PASSWORD)
    assert reply["user"]["id"] == user["id"]
    assert_public_user(reply["user"], "alice")
    assert isinstance(reply["token"], str) and reply["token"]
    assert client.ok("groups")["groups"] == []


def test_wrong_password_and_unknown_email_get_the_same_unauthorized_message(server):
    first, _, _ = signup(server, "alice")
    client = ChatClient(server)
    wrong_password = client.error("login", email=first.email, password="not the password")
    unknown_email = client.error("login", email=unique_email("nobody"), password=PASSWORD)
    assert wrong_password["code"] == unknown_email["code"] == "unauthorized"
    assert wrong_password["message"] == unknown_email["message"]
    # A failed login leaves the connection unauthenticated.
    assert client.code("groups") == "unauthorized"


def test_auth_with_a_token_resumes_the_session(server):
    _, token, user = signup(server, "alice")
    client = ChatClient(server)
    reply = client.ok("auth", token=token)
    assert reply["user"]["id"] == user["id"]
    assert_public_user(reply["user"], "alice")
    assert client.ok("groups")["groups"] == []


def test_auth_with_garbage_is_unauthorized(server):
    client = ChatClient(server)
    assert client.code("auth", token="not-a-token") == "unauthorized"
    assert client.code("groups") == "unauthorized"


def test_logout_revokes_the_token(server):
    first, token, _ = signup(server, "alice")
    first.ok("logout")
    later = ChatClient(server)
    assert later.code("auth", token=token) == "unauthorized"
    assert later.code("groups") == "unauthorized"
    # Logging in again gives a new, working token.
    fresh = later.ok("login", email=first.email, password=PASSWORD)["token"]
    assert fresh != token
    connect_as(server, fresh).ok("groups")


def test_logout_revokes_only_that_token(server):
    first, token, _ = signup(server, "alice")
    second = ChatClient(server)
    other_token = second.ok("login", email=first.email, password=PASSWORD)["token"]
    second.ok("logout")
    assert ChatClient(server).code("auth", token=other_token) == "unauthorized"
    connect_as(server, token).ok("groups")


@pytest.mark.parametrize("op,args", [
    ("logout", {}), ("users", {}), ("profile", {"name": "x"}), ("groups", {}),
    ("create", {"name": "g"}), ("invite", {"group": "-AAAAAAAAAAAAAAAAAAA"}),
    ("join", {"invite": "abc"}), ("leave", {"group": "-AAAAAAAAAAAAAAAAAAA"}),
    ("direct", {"user": "-AAAAAAAAAAAAAAAAAAA"}), ("subscribe", {"group": "-AAAAAAAAAAAAAAAAAAA"}),
    ("unsubscribe", {"group": "-AAAAAAAAAAAAAAAAAAA"}),
    ("send", {"group": "-AAAAAAAAAAAAAAAAAAA", "text": "hi"}),
    ("history", {"group": "-AAAAAAAAAAAAAAAAAAA"}),
    ("receipt", {"group": "-AAAAAAAAAAAAAAAAAAA", "message": "-AAAAAAAAAAAAAAAAAAA"}),
    ("typing", {"group": "-AAAAAAAAAAAAAAAAAAA"}),
])
def test_operations_before_auth_are_unauthorized(server, op, args):
    client = ChatClient(server)
    assert client.code(op, args) == "unauthorized"


def test_ping_is_answered_before_auth_with_pong_and_the_same_id(server):
    client = ChatClient(server)
    reply = client.request("ping")
    assert reply["op"] == "pong" and reply["id"] == 1
    client.send_json({"op": "ping", "id": "abc-7"})
    reply = client.recv_json(5)
    assert reply["op"] == "pong" and reply["id"] == "abc-7"


def test_a_request_without_id_gets_a_reply_without_id(server):
    client = ChatClient(server)
    client.send_json({"op": "ping"})
    reply = client.recv_json(5)
    assert reply["op"] == "pong"
    assert reply.get("id") is None


def test_an_unknown_operation_is_a_bad_request(server):
    # Not named by the spec; an op the server does not know is the client's mistake.
    client, _, _ = signup(server, "alice")
    assert client.code("teleport", group="x") == "bad_request"
    assert client.request("ping")["op"] == "pong"


def test_token_on_the_upgrade_url_authenticates(server):
    _, token, user = signup(server, "alice")
    client = ChatClient(server, token=token)
    assert client.ok("groups")["groups"] == []
    created = client.ok("create", name="by url token")["group"]
    assert created["createdBy"] == user["id"]


def test_bad_token_on_the_upgrade_url_does_not_authenticate(server):
    # The spec leaves open whether the upgrade is refused (401) or the connection opens
    # unauthenticated; either is accepted, but no operation may succeed on it.
    try:
        client = ChatClient(server, token="garbage.token.value")
    except InvalidStatus as refused:
        assert refused.response.status_code == 401
        return
    assert client.code("groups") == "unauthorized"


def test_profile_update_is_seen_by_others(server):
    alice, _, user = signup(server, "alice")
    bob, _, _ = signup(server, "bob")
    reply = alice.ok("profile", name="alicia", avatar="https://example.test/new.png")
    assert reply["user"]["id"] == user["id"]
    assert reply["user"]["name"] == "alicia"
    assert reply["user"]["avatar"] == "https://example.test/new.png"
    seen = {u["id"]: u for u in bob.ok("users")["users"]}
    assert seen[user["id"]]["name"] == "alicia"
    assert seen[user["id"]]["avatar"] == "https://example.test/new.png"
    # Only the given fields change.
    assert alice.ok("profile", avatar=None)["user"]["name"] == "alicia"


def test_users_are_sorted_by_name_with_online_flags(server):
    clients = {}
    for name in ["dave", "carol", "alice", "erin", "bob"]:
        clients[name], _, _ = signup(server, name)
    users = clients["alice"].ok("users")["users"]
    assert [u["name"] for u in users] == ["alice", "bob", "carol", "dave", "erin"]
    for user in users:
        assert_public_user(user, user["name"])
        assert user["online"] is True
    carol_id = next(u["id"] for u in users if u["name"] == "carol")
    clients["carol"].close()
    # Bounded wait: the spec allows up to the idle timeout (3 s here) for a close to be seen.
    deadline = time.monotonic() + PATIENCE
    while True:
        flags = {u["id"]: u["online"] for u in clients["alice"].ok("users")["users"]}
        if flags[carol_id] is False or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert flags[carol_id] is False
    assert sum(flags.values()) == 4


def test_a_user_with_two_connections_stays_online_until_both_close(server):
    alice, token, user = signup(server, "alice")
    bob, _, _ = signup(server, "bob")
    second = connect_as(server, token)
    alice.close()
    time.sleep(1)
    assert {u["id"]: u["online"] for u in bob.ok("users")["users"]}[user["id"]] is True
    second.close()
    deadline = time.monotonic() + PATIENCE
    while {u["id"]: u["online"] for u in bob.ok("users")["users"]}[user["id"]]:
        assert time.monotonic() < deadline, "alice still online after both connections closed"
        time.sleep(0.1)
