"""The store behind /ws: restarts keep everything, damaged files are handled as docs/durability.md says
("The document tree", "Durability contract"), and one data folder has one server."""

import os
import signal
import subprocess
import time

import pytest

from chat_client import PASSWORD, ChatClient, connect_as, group_with, signup
from conftest import PATIENCE, binary_path
from test_chat_crash import full_history


def snapshot_files(data):
    """Every file of the data folder and its bytes, except a lock file (its content is the
    locking server's business)."""
    files = {}
    for folder, _, names in os.walk(data):
        for name in sorted(names):
            path = os.path.join(folder, name)
            if "lock" not in name.lower():
                with open(path, "rb") as handle:
                    files[os.path.relpath(path, data)] = handle.read()
    return files


def normal(messages):
    """Messages without optional fields that carry nothing (`clientId` null, `receivedBy` {}),
    so that "absent" and "empty" compare equal: the spec marks both fields optional."""
    return [{k: v for k, v in m.items() if v is not None and v != {}} for m in messages]


def run_expecting_refusal(data, timeout=PATIENCE):
    """Runs the binary on `data` and returns (exit code, everything it printed); a server that
    does not refuse is killed after `timeout` seconds and reported as exit code None."""
    process = subprocess.Popen([binary_path(), "--host", "127.0.0.1", "--port", "0", "--data", data],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = process.communicate(timeout=timeout)
        return process.returncode, out + err
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        return None, out + err


def populate(server):
    """Users, a group with two members, messages and a receipt; returns what was made."""
    alice, alice_token, alice_user = signup(server, "alice")
    bob, bob_token, bob_user = signup(server, "bob")
    group = group_with(alice, bob, name="kept")
    bob.subscribe(group)
    first = alice.send_text(group, "before the restart", clientId="a-1")
    second = alice.ok("send", group=group, imageUrl="https://example.test/p.png")["message"]
    bob.expect_event("message", group=group)
    bob.ok("receipt", group=group, message=first["id"])
    history = alice.ok("history", group=group)["messages"]
    assert history[0]["receivedBy"].keys() == {bob_user["id"]}
    return {"alice": alice, "alice_token": alice_token, "alice_user": alice_user,
            "bob": bob, "bob_token": bob_token, "bob_user": bob_user,
            "group": group, "messages": [first, second], "history": history}


def test_a_restart_keeps_users_groups_members_messages_and_receipts(start_server):
    server = start_server()
    made = populate(server)
    revoked = ChatClient(server).ok("login", email=made["alice"].email, password=PASSWORD)["token"]
    connect_as(server, revoked).ok("logout")
    assert server.stop(signal.SIGTERM) == 0
    files = os.listdir(server.data)
    assert "manifest.json" in files and "journal.jsonl" in files, files

    again = start_server(data=server.data)
    # A token survives the restart; a revoked one stays revoked.
    alice = connect_as(again, made["alice_token"])
    assert alice.user["id"] == made["alice_user"]["id"]
    assert ChatClient(again).code("auth", token=revoked) == "unauthorized"
    bob = ChatClient(again)
    assert bob.ok("login", email=made["bob"].email, password=PASSWORD)["user"]["id"] == made["bob_user"]["id"]

    users = alice.ok("users")["users"]
    assert [u["name"] for u in users] == ["alice", "bob"]
    summaries = alice.ok("groups")["groups"]
    assert [s["id"] for s in summaries] == [made["group"]]
    assert summaries[0]["members"] == 2
    assert summaries[0]["lastMessage"]["id"] == made["messages"][1]["id"]
    reply = alice.subscribe(made["group"])
    assert reply["group"]["name"] == "kept"
    assert sorted(reply["group"]["members"]) == sorted([made["alice_user"]["id"], made["bob_user"]["id"]])
    # Online state is never read back from disk: bob has not subscribed since the restart.
    assert reply["group"]["online"] == [made["alice_user"]["id"]]
    assert normal(reply["messages"]) == normal(made["history"])
    assert [g["id"] for g in bob.ok("groups")["groups"]] == [made["group"]]


def test_acknowledged_data_survives_kill_9(start_server):
    server = start_server()
    made = populate(server)
    server.stop(signal.SIGKILL)
    again = start_server(data=server.data)
    alice = connect_as(again, made["alice_token"])
    assert normal(alice.ok("history", group=made["group"])["messages"]) == normal(made["history"])


# A checkpoint threshold past the largest spare journal: no spare is written, so journal.jsonl
# is never set aside and holds every line, for the tests that read or change it.
ONE_JOURNAL = {"SWITCHBOARD_COMPACT_AFTER_BYTES": str(1 << 30)}


def test_a_torn_journal_tail_is_cut_with_a_warning_and_earlier_data_is_intact(start_server):
    server = start_server(env=ONE_JOURNAL)
    made = populate(server)
    server.stop(signal.SIGKILL)
    journal = os.path.join(server.data, "journal.jsonl")
    assert os.path.exists(journal), "acknowledged mutations since the snapshot live in journal.jsonl"
    with open(journal, "rb") as handle:
        content = handle.read()
    # A journal that started as a spare has zeros after its lines: the next write goes where
    # they begin, which is the end of the file for one that grew.
    end = len(content.rstrip(b"\0"))
    lines = content[:end].splitlines()
    assert lines, "the journal holds the acknowledged mutations"
    # Half of a real line, as a crash in the middle of a write would leave it.
    torn = lines[-1][: len(lines[-1]) // 2]
    with open(journal, "r+b") as handle:
        handle.seek(end)
        handle.write(torn)

    again = start_server(data=server.data)
    alice = connect_as(again, made["alice_token"])
    assert normal(alice.ok("history", group=made["group"])["messages"]) == normal(made["history"])
    # The cut must leave a journal that later appends do not glue onto: write, crash, restart.
    later = alice.send_text(made["group"], "after the repair")
    again.stop(signal.SIGKILL)
    log = again.log().lower()
    assert any("journal" in line and "warn" in line for line in log.splitlines()), \
        "starting on a torn journal logs a warning naming the journal"
    third = start_server(data=server.data)
    texts = [m.get("text") for m in connect_as(third, made["alice_token"]).ok("history", group=made["group"])["messages"]]
    assert texts == ["before the restart", None, "after the repair"]
    assert later["id"]


def test_the_journal_of_a_start_makes_way_for_the_spare_of_zeros_and_loses_nothing(start_server):
    """docs/durability.md, "Writing": the journal opened at start grows as it is written; the
    first write after the compactor has written the spare moves the journal onto the spare."""
    server = start_server()
    made = populate(server)
    alice = connect_as(server, made["alice_token"])
    journal = os.path.join(server.data, "journal.jsonl")
    sent = []
    deadline = time.monotonic() + PATIENCE
    while True:
        sent.append(alice.send_text(made["group"], f"message {len(sent)}")["id"])
        with open(journal, "rb") as handle:
            if handle.read().endswith(b"\0"):
                break
        assert time.monotonic() < deadline, "the journal of the start never made way for the spare"
        time.sleep(0.05)
    # One more on the spare, then a crash: the restart replays the spare's lines and stops at
    # its zeros.
    sent.append(alice.send_text(made["group"], "on the spare")["id"])
    server.stop(signal.SIGKILL)
    again = start_server(data=server.data)
    ids = [m["id"] for m in full_history(connect_as(again, made["alice_token"]), made["group"])]
    assert ids[-len(sent):] == sent


@pytest.mark.parametrize("name", ["documents/Users.json", "manifest.json"])
def test_a_corrupted_checkpoint_file_stops_the_start_and_changes_nothing(start_server, name):
    server = start_server()
    populate(server)
    assert server.stop(signal.SIGTERM) == 0
    # A restart applies the journal as a checkpoint, so the documents hold the users now.
    start_server(data=server.data).stop(signal.SIGTERM)
    with open(os.path.join(server.data, name), "wb") as handle:
        handle.write(b'{"Users": {"broken": \x00\xff garbage not json')
    before = snapshot_files(server.data)
    code, output = run_expecting_refusal(server.data)
    assert code is not None, f"the server started on a corrupted {name}"
    assert code != 0
    assert name.split("/")[-1] in output, f"the error names the file: {output!r}"
    assert snapshot_files(server.data) == before


def test_a_corrupted_journal_line_before_the_end_stops_the_start(start_server):
    server = start_server(env=ONE_JOURNAL)
    populate(server)
    server.stop(signal.SIGKILL)
    journal = os.path.join(server.data, "journal.jsonl")
    with open(journal, "rb") as handle:
        content = handle.read()
    assert content.count(b"\n") >= 2, "several acknowledged mutations are in the journal"
    with open(journal, "wb") as handle:
        handle.write(b"this is not json\n" + content)
    before = snapshot_files(server.data)
    code, output = run_expecting_refusal(server.data)
    assert code is not None, "the server started on a journal with a corrupted line"
    assert code != 0
    # "a clear error naming the file and line"
    assert "journal.jsonl" in output, output
    assert snapshot_files(server.data) == before


def test_a_second_server_on_the_same_data_folder_is_refused(start_server):
    server = start_server()
    alice, _, _ = signup(server, "alice")
    code, output = run_expecting_refusal(server.data)
    assert code is not None, "a second server started on a data folder in use"
    assert code != 0
    lowered = output.lower()
    assert "lock" in lowered or server.data.lower() in lowered, output
    # The first one is untouched and still serves.
    assert alice.ok("create", name="still here")["group"]["name"] == "still here"
    assert server.process.poll() is None
