"""Cluster mode (docs/cluster.md): /rooms across three nodes on one redis-server."""

import contextlib
import subprocess
import time
import urllib.error
import urllib.request

import pytest

from conftest import PATIENCE, connect


def wait_ready(node):
    """Waits for the node's /readyz to say ready: in cluster mode, once it reached Redis."""
    deadline = time.monotonic() + PATIENCE
    while True:
        try:
            with urllib.request.urlopen(node.http + "/readyz", timeout=PATIENCE) as response:
                if response.status == 200:
                    return
        except urllib.error.HTTPError as error:
            assert error.code == 503
        assert time.monotonic() < deadline, "the node never reached Redis"
        time.sleep(0.05)


def start_cluster(start_server, redis, count, env=None, node_ids=None):
    nodes = []
    for index in range(count):
        environment = dict(env or {})
        if node_ids:
            environment["SWITCHBOARD_NODE_ID"] = node_ids[index]
        nodes.append(start_server("--redis", redis.url, env=environment))
    for node in nodes:
        wait_ready(node)
    return nodes


def next_notice(member, text):
    """Reads until the notice `text`; anything else before it must be a notice."""
    while True:
        received = member.recv(timeout=PATIENCE)
        if received == text:
            return
        assert received.startswith("* "), f"expected {text!r}, got {received!r}"


def join(sockets, members, node, room, name):
    """Opens `name` on `node` (closed with `sockets`, an ExitStack) and waits until it and every
    member before it saw its join."""
    member = sockets.enter_context(connect(f"{node.ws}/rooms/{room}?name={name}"))
    online = len(members) + 1
    for other in members + [member]:
        next_notice(other, f"* {name} joined ({online} online)")
    members.append(member)
    return member


def test_single_node_readyz_needs_no_redis(start_server):
    node = start_server()
    wait_ready(node)


def test_a_node_is_not_ready_until_it_reaches_redis(start_server, start_redis):
    from conftest import free_port
    port = free_port()
    node = start_server("--redis", f"redis://127.0.0.1:{port}")
    with pytest.raises(urllib.error.HTTPError) as refusal:
        urllib.request.urlopen(node.http + "/readyz", timeout=PATIENCE)
    assert refusal.value.code == 503
    start_redis(port=port)
    wait_ready(node)


def test_room_members_on_three_nodes_get_every_message_once_in_order_with_exact_counts(start_server, start_redis):
    redis = start_redis()
    nodes = start_cluster(start_server, redis, 3)
    with contextlib.ExitStack() as sockets:
        check_three_nodes(sockets, nodes)


def check_three_nodes(sockets, nodes):
    members = []
    for index in range(6):
        join(sockets, members, nodes[index % 3], "lobby", f"m{index}")
    per_member = 40
    for index, member in enumerate(members):
        for number in range(per_member):
            member.send(f"m{index}:{number}")
    for index, member in enumerate(members):
        expected = {f"m{other}": 0 for other in range(6) if other != index}
        while any(count < per_member for count in expected.values()):
            text = member.recv(timeout=PATIENCE)
            if text.startswith("* "):
                continue
            sender, number = text.split(":")
            assert sender in expected, f"m{index} got {text!r}: its own message, or from nowhere"
            assert int(number) == expected[sender], f"m{index} got {text!r} out of order or twice"
            expected[sender] += 1
    # Everyone leaves in turn; the others see each leave with the cluster-wide count.
    while members:
        leaving = members.pop(0)
        leaving.close()
        name = f"m{5 - len(members)}"
        for member in members:
            next_notice(member, f"* {name} left ({len(members)} online)")
    # Nothing arrived twice: a last message crosses the nodes alone.
    first = sockets.enter_context(connect(f"{nodes[0].ws}/rooms/lobby?name=a"))
    next_notice(first, "* a joined (1 online)")
    second = sockets.enter_context(connect(f"{nodes[1].ws}/rooms/lobby?name=b"))
    next_notice(first, "* b joined (2 online)")
    next_notice(second, "* b joined (2 online)")
    first.send("one")
    first.send("two")
    assert second.recv(timeout=PATIENCE) == "one"
    assert second.recv(timeout=PATIENCE) == "two"
    first.close()
    next_notice(second, "* a left (1 online)")
    second.close()


def test_a_publish_through_the_api_reaches_members_on_every_node(start_server, start_redis):
    admin = "a" * 32
    redis = start_redis()
    nodes = start_cluster(start_server, redis, 2, env={"SWITCHBOARD_ADMIN_TOKEN": admin})
    with contextlib.ExitStack() as sockets:
        members = []
        join(sockets, members, nodes[0], "news", "x")
        join(sockets, members, nodes[1], "news", "y")
        publish_and_receive(nodes[0], admin, members)
        assert metric(nodes[1], "switchboard_cluster_messages_received_total") == 1


def publish_and_receive(node, admin, members):
    request = urllib.request.Request(
        node.http + "/api/v1/rooms/news/messages", data=b"extra", method="POST",
        headers={"Authorization": f"Bearer {admin}"})
    with urllib.request.urlopen(request, timeout=PATIENCE) as response:
        assert response.status == 200
    for member in members:
        assert member.recv(timeout=PATIENCE) == "extra"
    assert metric(node, "switchboard_cluster_ready") == 1
    assert metric(node, "switchboard_cluster_messages_published_total") == 1


def metric(node, name):
    with urllib.request.urlopen(node.http + "/metrics", timeout=PATIENCE) as response:
        for line in response.read().decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
    raise AssertionError(f"no {name} in /metrics")


def redis_cli(redis, *args):
    result = subprocess.run(["redis-cli", "-p", str(redis.port), *args], capture_output=True, text=True,
                            timeout=PATIENCE)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def wait_for_redis(redis, condition):
    """Asks Redis until `condition(redis)` holds: the nodes have written their state back."""
    deadline = time.monotonic() + PATIENCE
    while not condition(redis):
        assert time.monotonic() < deadline, "the nodes never wrote their rooms back to Redis"
        time.sleep(0.05)


def next_message(member):
    while True:
        text = member.recv(timeout=PATIENCE)
        if not text.startswith("* "):
            return text


def test_after_redis_restarts_empty_the_nodes_write_their_rooms_back(start_server, start_redis):
    redis = start_redis()
    nodes = start_cluster(start_server, redis, 2)
    with contextlib.ExitStack() as sockets:
        members = []
        join(sockets, members, nodes[0], "phoenix", "a")
        join(sockets, members, nodes[1], "phoenix", "b")
        port = redis.port
        redis.stop()
        redis = start_redis(port=port)
        # Both nodes reconnect, subscribe again and write their shares back.
        wait_for_redis(redis, lambda r: redis_cli(r, "HLEN", "switchboard:room:phoenix:online") == ["2"]
                       and redis_cli(r, "PUBSUB", "NUMSUB", "switchboard:room:phoenix")[1] == "2")
        members[0].send("after")
        assert next_message(members[1]) == "after"
        newcomer = sockets.enter_context(connect(f"{nodes[1].ws}/rooms/phoenix?name=c"))
        for member in members + [newcomer]:
            next_notice(member, "* c joined (3 online)")
