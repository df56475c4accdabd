"""Cluster mode (docs/cluster.md): a node's members leave the rooms when the node dies, and a
node restarted under the same nodeId brings none of them back."""

import contextlib
import signal

from conftest import connect
from sse_client import ADMIN_TOKEN, EventStream
from test_cluster_rooms import join, next_notice, start_cluster


def test_the_members_of_a_killed_node_leave_on_the_others(start_server, start_redis):
    redis = start_redis()
    # Long enough that a live node stalled by a loaded machine (its key lives two thirds of
    # this, renewed every third) is not taken for dead; the dead one leaves within it.
    nodes = start_cluster(start_server, redis, 3, env={"SWITCHBOARD_NODE_TIMEOUT": "6"})
    with contextlib.ExitStack() as sockets:
        members = []
        for index, node in enumerate([nodes[0], nodes[1], nodes[2], nodes[1]]):
            join(sockets, members, node, "hall", f"m{index}")
        nodes[1].stop(signal.SIGKILL)
        # Its heartbeat expires; another node takes m1 and m3 out, names in order.
        for survivor in (members[0], members[2]):
            next_notice(survivor, "* m1 left (3 online)")
            next_notice(survivor, "* m3 left (2 online)")
        # A member joining now is counted with the two that are left.
        join(sockets, [members[0], members[2]], nodes[2], "hall", "late")


def test_a_node_restarted_under_its_name_brings_back_none_of_its_old_members(start_server, start_redis):
    redis = start_redis()
    # The heartbeat would keep the dead node's members for a minute: only the restarted node
    # can be what takes them out.
    env = {"SWITCHBOARD_NODE_TIMEOUT": "60"}
    keeper, phoenix = start_cluster(start_server, redis, 2, env=env, node_ids=["keeper", "phoenix"])
    with contextlib.ExitStack() as sockets:
        members = []
        join(sockets, members, keeper, "den", "watcher")
        join(sockets, members, phoenix, "den", "ghost")
        phoenix.stop(signal.SIGKILL)
        reborn = start_cluster(start_server, redis, 1, env=env, node_ids=["phoenix"])[0]
        next_notice(members[0], "* ghost left (1 online)")
        newcomer = sockets.enter_context(connect(f"{reborn.ws}/rooms/den?name=newcomer"))
        next_notice(newcomer, "* newcomer joined (2 online)")
        next_notice(members[0], "* newcomer joined (2 online)")


def test_the_presence_stream_shows_every_node_and_a_dead_node_s_members_leaving(start_server, start_redis):
    redis = start_redis()
    env = {"SWITCHBOARD_NODE_TIMEOUT": "6", "SWITCHBOARD_ADMIN_TOKEN": ADMIN_TOKEN}
    nodes = start_cluster(start_server, redis, 2, env=env)
    with contextlib.ExitStack() as sockets:
        members = []
        join(sockets, members, nodes[0], "plaza", "near")
        join(sockets, members, nodes[1], "plaza", "far")
        stream = EventStream(nodes[0])
        snapshot = stream.next_event()
        assert snapshot["event"] == "snapshot"
        assert snapshot["data"]["rooms"] == [{"name": "plaza", "online": 2, "users": ["far", "near"]}]
        nodes[1].stop(signal.SIGKILL)
        change = stream.expect("presence", room="plaza", left=["far"])
        assert change["data"]["online"] == 1 and change["data"]["joined"] == []
        stream.close()
