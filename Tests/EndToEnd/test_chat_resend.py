"""Sending exactly once (docs/protocol.md, "Sending exactly once"): a `send` resent with the same
`clientId` answers with the message already stored, whether the first reply was lost to a dropped
connection or to a `kill -9` between the durable write and the reply."""

import os
import re
import signal
import time
import urllib.request

from chat_client import connect_as, group_with, signup
from test_chat_crash import full_history


def mutations_written(server):
    """The store's count of changes written since the start (it survives the journal making
    way for a spare, which a file's size does not)."""
    with urllib.request.urlopen(server.http + "/metrics", timeout=10) as response:
        text = response.read().decode()
    return int(float(re.search(r"^switchboard_store_mutations_total (\S+)$", text, re.M).group(1)))


def wait_for_journal_line(data, needle, timeout=10):
    """Waits until the store's journal holds a line containing `needle`: the write is durable."""
    path = os.path.join(data, "journal.jsonl")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.exists(path):
            with open(path, "rb") as journal:
                if needle.encode() in journal.read():
                    return
        time.sleep(0.02)
    raise TimeoutError(f"{needle!r} never reached {path}")


def test_a_resend_on_a_new_connection_answers_with_the_stored_message(server):
    ada, token, _ = signup(server, "Ada")
    bob, _, _ = signup(server, "Bob")
    group = group_with(ada, bob)
    bob.subscribe(group)
    first = ada.ok("send", group=group, text="only once", clientId="resend-1")["message"]
    bob.expect_event("message", group=group)
    written = mutations_written(server)
    ada.close()
    again = connect_as(server, token)
    second = again.ok("send", group=group, text="only once", clientId="resend-1")["message"]
    assert second == first
    bob.no_event("message", group=group)
    assert mutations_written(server) == written, "the resend wrote nothing"
    assert [m["id"] for m in full_history(again, group)] == [first["id"]]


def test_a_resend_after_kill_9_between_the_write_and_the_reply_is_stored_once(start_server):
    server = start_server()
    ada, token, _ = signup(server, "Ada")
    group = group_with(ada)
    ada.submit("send", group=group, text="survives", clientId="crash-1")
    wait_for_journal_line(server.data, "crash-1")
    server.stop(signal.SIGKILL)
    ada.close()

    server = start_server(data=server.data)
    again = connect_as(server, token)
    resent = again.ok("send", group=group, text="survives", clientId="crash-1")["message"]
    stored = full_history(again, group)
    assert [m["clientId"] for m in stored] == ["crash-1"]
    assert stored[0]["id"] == resent["id"]
    assert resent["text"] == "survives"
