"""Sending exactly once (docs/protocol.md, "Sending exactly once"): a `send` resent with the same
`clientId` answers with the message already stored, whether the first reply was lost to a dropped
connection or to a `kill -9` between the durable write and the reply."""

import re
import signal
import time
import urllib.request

from chat_client import connect_as, group_with, signup
from conftest import PATIENCE
from test_chat_crash import full_history


def mutations_written(server):
    """The store's count of changes written since the start (it survives the journal making
    way for a spare, which a file's size does not)."""
    with urllib.request.urlopen(server.http + "/metrics", timeout=10) as response:
        text = response.read().decode()
    return int(float(re.search(r"^switchboard_store_mutations_total (\S+)$", text, re.M).group(1)))


def wait_for_mutations(server, count):
    """Waits until the store has written (and flushed) `count` changes since the start."""
    deadline = time.monotonic() + PATIENCE
    while mutations_written(server) < count:
        assert time.monotonic() < deadline, f"the store did not write {count} changes within {PATIENCE} s"
        time.sleep(0.02)


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
    # Durable before the crash, and not yet answered: counted by the store, which a look
    # into journal.jsonl is not (the journal of the start makes way for a spare of zeros).
    written = mutations_written(server)
    ada.submit("send", group=group, text="survives", clientId="crash-1")
    wait_for_mutations(server, written + 1)
    server.stop(signal.SIGKILL)
    ada.close()

    server = start_server(data=server.data)
    again = connect_as(server, token)
    resent = again.ok("send", group=group, text="survives", clientId="crash-1")["message"]
    stored = full_history(again, group)
    assert [m["clientId"] for m in stored] == ["crash-1"]
    assert stored[0]["id"] == resent["id"]
    assert resent["text"] == "survives"
