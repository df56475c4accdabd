"""Cluster mode (docs/cluster.md, "One history"): /ws accounts, groups and messages shared by
every node through the Redis Stream journal."""

import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request

from chat_client import ChatClient, connect_as, signup, unique_email
from conftest import PATIENCE
from test_cluster_rooms import start_cluster, wait_ready

# The tests send faster than a person: no per-connection or per-user limit in the way.
UNLIMITED = {"SWITCHBOARD_MESSAGES_PER_SECOND": "1000000", "SWITCHBOARD_USER_MESSAGES_PER_SECOND": "1000000"}


def eventually(action, what):
    """Runs `action` until it returns something truthy: a change made on one node reaches the
    others once they have read it from the journal."""
    deadline = time.monotonic() + PATIENCE
    while True:
        result = action()
        if result:
            return result
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.02)


def join_on(client, invite, gid):
    """Joins by `invite` on the client's node, once that node has the group."""
    def attempt():
        reply = client.request("join", invite=invite)
        if reply["op"] == "ok":
            return reply
        assert reply["code"] == "not_found", reply
        return None
    return eventually(attempt, f"group {gid} on another node")


def full_history(client, gid):
    """Every message of `gid`, oldest first, paged from the client's node."""
    messages = []
    before = None
    while True:
        args = {"group": gid, "limit": 200}
        if before:
            args["before"] = before
        reply = client.ok("history", **args)
        messages = reply["messages"] + messages
        if not reply["more"]:
            return messages
        before = reply["messages"][0]["id"]


def assert_has_everything(newcomer, writer, gid, texts):
    """`newcomer`, on a node that came late or came back, has the whole history of `gid`, the
    same as `writer`'s node, and gets the next message live."""
    history = full_history(newcomer, gid)
    assert [message["text"] for message in history] == texts
    assert history == full_history(writer, gid)
    newcomer.subscribe(gid)
    sent = writer.send_text(gid, "live")
    assert newcomer.expect_event("message", message=lambda m: m["id"] == sent["id"])


def message_events(client, count):
    """The next `count` message events' (user, text), in arrival order."""
    return [(event["message"]["user"], event["message"]["text"])
            for event in (client.expect_event("message") for _ in range(count))]


def spread_group(nodes, names):
    """Signs up one user per node (round robin), the first creates a group and the others join
    on their own nodes; returns (clients, gid)."""
    clients = [signup(nodes[index % len(nodes)], name)[0] for index, name in enumerate(names)]
    group = clients[0].ok("create", name="spread")["group"]
    for client in clients[1:]:
        join_on(client, group["invite"], group["id"])
    return clients, group["id"]


def test_a_token_from_one_node_signs_in_on_every_node_and_a_logout_revokes_it_everywhere(start_server, start_redis):
    redis = start_redis()
    nodes = start_cluster(start_server, redis, 3, env=UNLIMITED)
    client, token, user = signup(nodes[0], "Ada")
    for node in nodes[1:]:
        other = eventually(lambda: _auth(node, token), "the account on another node")
        assert other.user["id"] == user["id"]
        other.close()
    login = ChatClient(nodes[2])
    assert login.ok("login", email=client.email, password=client.password)["user"]["id"] == user["id"]
    elsewhere = connect_as(nodes[1], token)
    client.ok("logout")
    eventually(lambda: elsewhere.request("groups").get("code") == "unauthorized", "the connection elsewhere signed out")

    def refused():
        probe = ChatClient(nodes[1])
        code = probe.request("auth", token=token).get("code")
        probe.close()
        return code == "unauthorized"
    eventually(refused, "the logout on another node")


def _auth(node, token):
    probe = ChatClient(node)
    reply = probe.request("auth", token=token)
    if reply["op"] == "ok":
        probe.user = reply["user"]
        return probe
    probe.close()
    return None


def watch_on_every_node(nodes, senders, gid):
    """Signs up a watcher on each node, invited into `gid` by the first sender; the watchers
    and the senders subscribe, and what came before is drained. Returns the watchers."""
    watchers = []
    for node in nodes:
        watcher, _, _ = signup(node, "W")
        join_on(watcher, senders[0].ok("invite", group=gid)["invite"], gid)
        watchers.append(watcher)
    for client in senders + watchers:
        client.subscribe(gid)
    for client in senders + watchers:
        client.drain(within=0.5)
    return watchers


def test_members_on_three_nodes_get_every_message_once_in_one_order_and_one_history(start_server, start_redis):
    redis = start_redis()
    nodes = start_cluster(start_server, redis, 3, env=UNLIMITED)
    senders, gid = spread_group(nodes, ["S0", "S1", "S2"])
    # One watcher per node, sending nothing: all three must see the same sequence.
    watchers = watch_on_every_node(nodes, senders, gid)
    per_sender = 60
    acked = {}

    def send_all(index, client):
        ids = [client.submit("send", group=gid, text=f"s{index}:{number}", clientId=f"s{index}-{number}")
               for number in range(per_sender)]
        acked[index] = [client.wait_reply(request_id, timeout=30) for request_id in ids]

    threads = [threading.Thread(target=send_all, args=(index, client)) for index, client in enumerate(senders)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for index in range(3):
        assert all(reply["op"] == "ok" for reply in acked[index]), acked[index]
    sequences = [message_events(watcher, 3 * per_sender) for watcher in watchers]
    assert sequences[0] == sequences[1] == sequences[2], "the nodes sent the events in different orders"
    for index in range(3):
        mine = [text for user, text in sequences[0] if text.startswith(f"s{index}:")]
        assert mine == [f"s{index}:{number}" for number in range(per_sender)], "a sender's order was lost"
    for index, sender in enumerate(senders):
        others = message_events(sender, 2 * per_sender)
        assert sorted(text for _, text in others) == sorted(
            text for _, text in sequences[0] if not text.startswith(f"s{index}:")), "a sender got its own or missed some"
    for watcher in watchers:
        watcher.no_event("message", within=0.3)
    histories = [full_history(watcher, gid) for watcher in watchers]
    assert histories[0] == histories[1] == histories[2]
    assert len(histories[0]) == 3 * per_sender


def test_entries_applied_from_redis_answer_keep_one_order_on_every_node(start_server, start_redis):
    """A node applies its own entry from Redis's answer to the `XADD` when the entry before it is
    the last one it applied (docs/cluster.md, "One history"): bursts from two nodes at once, until
    both have done so, still reach every watcher in one order and leave one history."""
    redis = start_redis()
    nodes = start_cluster(start_server, redis, 2, env=UNLIMITED)
    senders, gid = spread_group(nodes, ["S0", "S1", "S2", "S3"])
    watchers = watch_on_every_node(nodes, senders, gid)
    per_burst = 30
    sent = {index: [] for index in range(len(senders))}
    replies = {}

    def burst(index, client):
        first = len(sent[index])
        ids = [client.submit("send", group=gid, text=f"s{index}:{first + number}") for number in range(per_burst)]
        replies[index] = [client.wait_reply(request_id, timeout=30) for request_id in ids]
        sent[index] += [f"s{index}:{first + number}" for number in range(per_burst)]

    def placed_on_both():
        replies.clear()
        threads = [threading.Thread(target=burst, args=(index, client)) for index, client in enumerate(senders)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        # Checked here: an assertion in a thread would not fail the test.
        assert sorted(replies) == list(range(len(senders))), "a sender's burst did not finish"
        for answers in replies.values():
            assert all(answer["op"] == "ok" for answer in answers), answers
        return all(metric(node, "switchboard_cluster_journal_entries_placed_total") > 0 for node in nodes)

    eventually(placed_on_both, "entries applied from Redis's answer on both nodes")
    total = sum(len(texts) for texts in sent.values())
    sequences = [message_events(watcher, total) for watcher in watchers]
    assert sequences[0] == sequences[1], "the nodes sent the events in different orders"
    for index, texts in sent.items():
        assert [text for _, text in sequences[0] if text.startswith(f"s{index}:")] == texts, "a sender's order was lost"
    for watcher in watchers:
        watcher.no_event("message", within=0.3)
    histories = [full_history(watcher, gid) for watcher in watchers]
    assert histories[0] == histories[1]
    assert sorted(message["text"] for message in histories[0]) == sorted(text for _, text in sequences[0])


def test_receipts_typing_and_membership_changes_reach_subscribers_on_other_nodes(start_server, start_redis):
    redis = start_redis()
    nodes = start_cluster(start_server, redis, 2, env=UNLIMITED)
    (owner, guest), gid = spread_group(nodes, ["Owner", "Guest"])
    owner.subscribe(gid)
    guest.subscribe(gid)
    owner.ok("typing", group=gid)
    assert guest.expect_event("typing", group=gid)["user"] == owner.user["id"]
    owner.no_event("typing", within=0.3)
    message = owner.send_text(gid, "hello")
    assert guest.expect_event("message")["message"]["id"] == message["id"]
    guest.ok("receipt", group=gid, message=message["id"])
    receipt = owner.expect_event("receipt", message=message["id"])
    assert receipt["user"] == guest.user["id"]
    guest.ok("leave", group=gid)
    owner.expect_event("member", user=guest.user["id"], action="left")
    eventually(lambda: guest.user["id"] not in owner.ok("subscribe", group=gid)["group"]["members"], "the leave")


def test_a_node_that_joins_late_has_the_whole_history(start_server, start_redis):
    redis = start_redis()
    first, = start_cluster(start_server, redis, 1, env=UNLIMITED)
    client, token, _ = signup(first, "Early")
    gid = client.ok("create", name="archive")["group"]["id"]
    texts = [f"m{number}" for number in range(500)]
    for text in texts:
        client.submit("send", group=gid, text=text)
    while len(client.replies) < len(texts):
        client._file(client.recv_json(PATIENCE))
    late, = start_cluster(start_server, redis, 1, env=UNLIMITED)
    reader = connect_as(late, token)
    history = full_history(reader, gid)
    assert [message["text"] for message in history] == texts
    assert history == full_history(client, gid)


def test_a_node_killed_under_load_loses_nothing_acknowledged(start_server, start_redis):
    redis = start_redis("--appendonly", "yes", "--appendfsync", "always")
    nodes = start_cluster(start_server, redis, 3, env=UNLIMITED)
    (survivor, doomed, watcher), gid = spread_group(nodes, ["Survivor", "Doomed", "Watcher"])
    acked = []

    def load(client):
        try:
            for number in range(2000):
                reply = client.request("send", group=gid, text=f"{client.user['name']}:{number}")
                if reply["op"] == "ok":
                    acked.append(reply["message"]["id"])
        except (OSError, TimeoutError, Exception):
            return

    threads = [threading.Thread(target=load, args=(client,)) for client in (survivor, doomed)]
    for thread in threads:
        thread.start()
    eventually(lambda: len(acked) > 300, "traffic")
    nodes[1].process.send_signal(signal.SIGKILL)
    nodes[1].process.wait()
    for thread in threads:
        thread.join()
    stored = {message["id"] for message in full_history(watcher, gid)}
    missing = [mid for mid in acked if mid not in stored]
    assert not missing, f"{len(missing)} acknowledged messages are not in the history"
    assert stored == {message["id"] for message in full_history(survivor, gid)}


def send_until_stored(client, gid, text, client_id):
    """Sends until the server answers ok, as a client should after `unavailable`; the
    `clientId` makes every resend safe."""
    while True:
        try:
            reply = client.request("send", group=gid, text=text, clientId=client_id, timeout=30)
        except TimeoutError:
            continue
        if reply["op"] == "ok":
            return reply["message"]
        assert reply["code"] == "unavailable", reply
        time.sleep(0.05)


def test_redis_restarted_mid_traffic_loses_and_doubles_nothing(start_server, start_redis):
    redis = start_redis("--appendonly", "yes", "--appendfsync", "always")
    nodes = start_cluster(start_server, redis, 2, env=UNLIMITED)
    (first, second), gid = spread_group(nodes, ["First", "Second"])
    stored = {}

    def load(client):
        for number in range(400):
            key = f"{client.user['name']}-{number}"
            stored[key] = send_until_stored(client, gid, key, key)["id"]

    threads = [threading.Thread(target=load, args=(client,)) for client in (first, second)]
    for thread in threads:
        thread.start()
    eventually(lambda: len(stored) > 150, "traffic")
    redis.restart()
    for thread in threads:
        thread.join()
    for node in nodes:
        wait_ready(node)
    for client in (first, second):
        history = full_history(client, gid)
        texts = [message["text"] for message in history]
        assert len(texts) == len(set(texts)), "a message was stored twice"
        assert sorted(texts) == sorted(stored), "a message is missing"
        assert {message["text"]: message["id"] for message in history} == stored


def test_while_redis_is_stopped_sends_are_unavailable_and_everything_catches_up_after(start_server, start_redis):
    redis = start_redis()
    nodes = start_cluster(start_server, redis, 2, env=UNLIMITED)
    (writer, reader), gid = spread_group(nodes, ["Writer", "Reader"])
    reader.subscribe(gid)
    before = writer.send_text(gid, "before")
    assert reader.expect_event("message")["message"]["id"] == before["id"]
    redis.process.send_signal(signal.SIGSTOP)
    try:
        reply = writer.request("send", group=gid, text="while stopped", clientId="stopped", timeout=30)
        assert reply["op"] == "error" and reply["code"] == "unavailable", reply
        with_status = eventually(lambda: _readyz(nodes[0]) == 503 and _readyz(nodes[1]) == 503, "503 from /readyz")
        assert with_status
        assert writer.request("send", group=gid, text="still stopped")["code"] == "unavailable"
    finally:
        redis.process.send_signal(signal.SIGCONT)
    for node in nodes:
        wait_ready(node)
    after = send_until_stored(writer, gid, "after", "after")
    resent = send_until_stored(writer, gid, "while stopped", "stopped")
    texts = [event["message"]["text"] for event in (reader.expect_event("message") for _ in range(2))]
    assert "after" in texts
    history = [message["text"] for message in full_history(reader, gid)]
    assert history.count("while stopped") == 1 and history.count("after") == 1
    assert history[0] == "before"
    assert after["id"] in {message["id"] for message in full_history(writer, gid)}
    assert resent["text"] == "while stopped"


def _readyz(node):
    try:
        with urllib.request.urlopen(node.http + "/readyz", timeout=PATIENCE) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def redis_cli(redis, *args):
    result = subprocess.run(["redis-cli", "-p", str(redis.port), *args], capture_output=True, text=True,
                            timeout=PATIENCE, check=True)
    return result.stdout.strip()


def metric(node, name):
    with urllib.request.urlopen(node.http + "/metrics", timeout=PATIENCE) as response:
        for line in response.read().decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[-1])
    raise AssertionError(f"no {name} in /metrics")


def stream_id(text):
    milliseconds, sequence = text.split("-")
    return int(milliseconds), int(sequence)


def test_a_snapshot_trims_the_journal_and_a_late_node_starts_from_it(start_server, start_redis):
    redis = start_redis()
    # Small checkpoints keep only the newest 50 messages of a group in memory, so a snapshot
    # reads the rest from the node's store.
    env = dict(UNLIMITED, SWITCHBOARD_SNAPSHOT_ENTRIES="10", SWITCHBOARD_COMPACT_AFTER_BYTES="16384",
               SWITCHBOARD_SEGMENT_BYTES="16384", SWITCHBOARD_RECENT_MESSAGES="50")
    first, second = start_cluster(start_server, redis, 2, env=env)
    (client, reader), gid = spread_group([first, second], ["Writer", "Reader"])
    reader.subscribe(gid)
    texts = [f"m{number}" for number in range(1000)]
    for text in texts:
        client.submit("send", group=gid, text=text)
    while len(client.replies) < len(texts):
        client._file(client.recv_json(PATIENCE))
    # Each node's store has checkpointed (16 KiB journals) before a snapshot is due, so the
    # snapshot reads what memory no longer holds from disk. Checkpoints run at the lowest
    # priority: on a busy machine they come well after the sends.
    eventually(lambda: all(metric(node, "switchboard_store_snapshot_bytes") > 0 for node in (first, second)),
               "a checkpoint on each node")
    # Pipelined sends share journal entries (one per loop iteration): one at a time from here
    # on, one entry each, so a snapshot is due.
    for number in range(20):
        texts.append(client.send_text(gid, f"k{number}")["text"])
    snapshot = eventually(lambda: redis_cli(redis, "HGET", "switchboard:snapshot", "id"), "a snapshot")
    # The next snapshot trims the journal behind the first.
    for number in range(40):
        texts.append(client.send_text(gid, f"n{number}")["text"])
    eventually(lambda: redis_cli(redis, "HGET", "switchboard:snapshot", "id") != snapshot, "a second snapshot")
    oldest = redis_cli(redis, "XRANGE", "switchboard:journal", "-", "+", "COUNT", "1").splitlines()[0]
    assert stream_id(oldest) >= stream_id(snapshot), "the journal was not trimmed behind the first snapshot"
    late = start_cluster(start_server, redis, 1, env=env)[0]
    assert_has_everything(connect_as(late, client.token), client, gid, texts)


def test_who_is_online_in_a_group_spans_the_nodes_and_a_killed_node_leaves_it(start_server, start_redis):
    redis = start_redis()
    nodes = start_cluster(start_server, redis, 2, env=dict(UNLIMITED, SWITCHBOARD_NODE_TIMEOUT="6"))
    (ada, bob), gid = spread_group(nodes, ["Ada", "Bob"])
    bob_id = bob.user["id"]
    assert ada.subscribe(gid)["group"]["online"] == [ada.user["id"]]
    bob.subscribe(gid)
    event = ada.expect_event("presence", group=gid, joined=lambda joined: bob_id in joined)
    assert event["online"] == 2
    # Bob's node learns of Ada from Redis: his view of the group holds both.
    both = sorted([ada.user["id"], bob_id])
    eventually(lambda: sorted(bob.ok("subscribe", group=gid)["group"]["online"]) == both, "Ada online on Bob's node")
    bob.close()
    event = ada.expect_event("presence", group=gid, left=lambda left: bob_id in left)
    assert event["online"] == 1
    again = connect_as(nodes[1], bob.token)
    again.subscribe(gid)
    ada.expect_event("presence", group=gid, joined=lambda joined: bob_id in joined)
    nodes[1].process.send_signal(signal.SIGKILL)
    nodes[1].process.wait()
    event = ada.expect_event("presence", group=gid, left=lambda left: bob_id in left)
    assert event["online"] == 1
    assert ada.ok("subscribe", group=gid)["group"]["online"] == [ada.user["id"]]


def test_a_node_restarted_on_its_folder_reads_on_from_where_it_stopped(start_server, start_redis):
    redis = start_redis()
    first, second = start_cluster(start_server, redis, 2, env=UNLIMITED)
    (writer, reader), gid = spread_group([first, second], ["Writer", "Reader"])
    texts = [writer.send_text(gid, f"before {number}")["text"] for number in range(20)]
    eventually(lambda: len(full_history(reader, gid)) == 20, "the messages on the second node")
    folder = second.data
    second.stop(signal.SIGKILL)
    texts += [writer.send_text(gid, f"while away {number}")["text"] for number in range(20)]
    again = start_server("--redis", redis.url, env=UNLIMITED, data=folder)
    wait_ready(again)
    assert_has_everything(connect_as(again, reader.token), writer, gid, texts)


def test_after_redis_comes_back_empty_the_nodes_go_on_with_the_history_they_have(start_server, start_redis):
    redis = start_redis()
    nodes = start_cluster(start_server, redis, 2, env=UNLIMITED)
    (first, second), gid = spread_group(nodes, ["First", "Second"])
    texts = [first.send_text(gid, f"before {number}")["text"] for number in range(10)]
    eventually(lambda: len(full_history(second, gid)) == 10, "the messages on the second node")
    redis.restart()
    for node in nodes:
        wait_ready(node)
    # The nodes wrote the token secret back: the second node, restarted on its folder after
    # that, signs in with it the tokens the first node made before.
    nodes[1].stop(signal.SIGKILL)
    again = start_server("--redis", redis.url, env=UNLIMITED, data=nodes[1].data)
    wait_ready(again)
    second = connect_as(again, second.token)
    assert connect_as(again, first.token).user["id"] == first.user["id"]
    second.subscribe(gid)
    texts.append(send_until_stored(first, gid, "after", "after")["text"])
    assert second.expect_event("message", message=lambda m: m["text"] == "after")
    assert [message["text"] for message in full_history(second, gid)] == texts


def test_one_email_signed_up_on_two_nodes_at_once_makes_one_account(start_server, start_redis):
    redis = start_redis()
    nodes = start_cluster(start_server, redis, 2, env=UNLIMITED)
    for attempt in range(10):
        email = unique_email(f"race{attempt}")
        clients = [ChatClient(node) for node in nodes]
        ids = [client.submit("signup", email=email, password="correct horse", name="Racer") for client in clients]
        replies = [client.wait_reply(request_id) for client, request_id in zip(clients, ids)]
        outcomes = sorted(reply.get("code", reply["op"]) for reply in replies)
        assert outcomes == ["conflict", "ok"], replies
        for client in clients:
            client.close()


def test_a_single_nodes_folder_seeds_an_empty_cluster(start_server, start_redis):
    single = start_server(env=UNLIMITED)
    owner, token, _ = signup(single, "Owner")
    gid = owner.ok("create", name="from before")["group"]["id"]
    texts = [owner.send_text(gid, f"single {number}")["text"] for number in range(30)]
    folder = single.data
    single.stop()
    redis = start_redis()
    first = start_server("--redis", redis.url, env=UNLIMITED, data=folder)
    wait_ready(first)
    eventually(lambda: redis_cli(redis, "HGET", "switchboard:snapshot", "id") == "0-1", "the seeding snapshot")
    writer = connect_as(first, token)
    texts.append(writer.send_text(gid, "in the cluster")["text"])
    second, = start_cluster(start_server, redis, 1, env=UNLIMITED)
    assert_has_everything(connect_as(second, token), writer, gid, texts)
