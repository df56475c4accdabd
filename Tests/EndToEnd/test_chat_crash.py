"""Crash safety (docs/durability.md): after `kill -9` at any moment, every
acknowledged message is there after the restart, exactly once, and nothing is duplicated.

The second configuration checkpoints every 8 KiB of journal into 4 KiB segments and keeps 5
messages per group in memory, so the kills land during checkpoints and segment seals too, and
the history is read back across many segments."""

import collections
import random
import signal
import threading
import time

import pytest
from websockets.exceptions import ConnectionClosed

from chat_client import connect_as, group_with, signup
from conftest import PATIENCE

ROUNDS = 5
SENDERS = 8
# The default limit (100 messages a second per connection) would turn a fast sender into a
# rate-limited one; this test is about durability, so the limit is lifted.
ENV = {"SWITCHBOARD_MESSAGES_PER_SECOND": "1000000", "SWITCHBOARD_USER_MESSAGES_PER_SECOND": "1000000"}
SMALL_SEGMENTS = {**ENV, "SWITCHBOARD_COMPACT_AFTER_BYTES": "8192", "SWITCHBOARD_SEGMENT_BYTES": "4096",
                  "SWITCHBOARD_RECENT_MESSAGES": "5"}


def full_history(client, group):
    """Every message of the group, oldest first, paging back with `before`."""
    page = client.ok("history", group=group, limit=200)
    messages = page["messages"]
    while page["more"]:
        page = client.ok("history", group=group, before=messages[0]["id"], limit=200)
        assert page["messages"], "more was true but the older page is empty"
        messages = page["messages"] + messages
    return messages


def send_until_killed(client, group, round_number, sender, acknowledged, deadline):
    """Sends numbered messages one at a time, recording (clientId, message id) of every ack,
    until the connection dies or the deadline passes."""
    number = 0
    try:
        while time.monotonic() < deadline:
            client_id = f"r{round_number}-s{sender}-n{number}"
            reply = client.request("send", group=group, text=client_id, clientId=client_id, timeout=PATIENCE)
            if reply["op"] == "ok":
                assert reply["message"]["clientId"] == client_id
                acknowledged.append((client_id, reply["message"]["id"]))
            number += 1
    except (ConnectionClosed, OSError, TimeoutError):
        pass


@pytest.mark.parametrize("env", [ENV, SMALL_SEGMENTS], ids=["default", "small-segments"])
def test_every_acknowledged_message_survives_kill_9_exactly_once(start_server, env):
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    server = start_server(env=env)
    owner, token, _ = signup(server, "owner")
    group = group_with(owner, name="crash")
    owner.close()
    acknowledged = {}
    for round_number in range(ROUNDS):
        clients = [connect_as(server, token) for _ in range(SENDERS)]
        per_sender = [[] for _ in range(SENDERS)]
        deadline = time.monotonic() + 20
        threads = [threading.Thread(target=send_until_killed,
                                    args=(clients[i], group, round_number, i, per_sender[i], deadline))
                   for i in range(SENDERS)]
        for thread in threads:
            thread.start()
        # The kill comes a random while after the round's first acknowledgement (a restarted
        # server on a loaded machine may take a while to give one).
        first_ack_by = time.monotonic() + PATIENCE
        while not any(per_sender) and time.monotonic() < first_ack_by:
            time.sleep(0.01)
        time.sleep(rng.uniform(0.3, 2.0))
        server.stop(signal.SIGKILL)
        for thread in threads:
            thread.join(timeout=30)
            assert not thread.is_alive(), "a sender did not notice the server was gone"
        for client in clients:
            client.close()
        acked_this_round = sum(len(acks) for acks in per_sender)
        assert acked_this_round > 0, f"round {round_number}: nothing was acknowledged before the kill"
        for acks in per_sender:
            acknowledged.update(acks)

        server = start_server(data=server.data, env=env)
        checker = connect_as(server, token)
        stored = full_history(checker, group)
        ids = [m["id"] for m in stored]
        assert ids == sorted(ids) and len(set(ids)) == len(ids), f"seed {seed}: history ids not unique ascending"
        by_client_id = collections.Counter(m.get("clientId") for m in stored)
        duplicated = [cid for cid, count in by_client_id.items() if count > 1]
        assert not duplicated, f"seed {seed}, round {round_number}: duplicated messages {duplicated[:5]}"
        stored_ids = {m.get("clientId"): m["id"] for m in stored}
        missing = [cid for cid in acknowledged if cid not in stored_ids]
        assert not missing, (f"seed {seed}, round {round_number}: {len(missing)} of {len(acknowledged)} "
                             f"acknowledged messages lost, e.g. {missing[:5]}")
        changed = [cid for cid, mid in acknowledged.items() if stored_ids[cid] != mid]
        assert not changed, f"seed {seed}: acknowledged ids changed after restart: {changed[:5]}"
        for message in stored:
            assert message["text"] == message["clientId"]
        print(f"round {round_number}: {acked_this_round} acknowledged, {len(stored)} stored in all")
        checker.close()
