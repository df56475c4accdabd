"""Several event loops (`threads`): rooms and chat groups whose members sit on every loop, and
shutdown closing every loop's connections.

The chat loop accepts every connection and gives them to the loops in turn, so connections
opened one after another land on loops 0, 1, ..., threads-1, 0, ...: twice as many members as
loops puts two on every loop. Every wait is for an event (a notice, a reply), never a time."""

import signal
import threading

import pytest
from websockets.exceptions import ConnectionClosed

from chat_client import connect_as, group_with, signup
from conftest import PATIENCE, UNLIMITED_PUBLISHING, connect

LOOPS = [1, 2, 4]


def start_with_loops(start_server, threads, env=None):
    environment = {"SWITCHBOARD_THREADS": str(threads)}
    environment.update(env or {})
    return start_server(env=environment)


def expect_notice(ws, text):
    """Reads until the notice `text`; every message before it must be a notice too."""
    while True:
        received = ws.recv(timeout=PATIENCE)
        assert received.startswith("* "), f"a message arrived before the notice {text!r}: {received!r}"
        if received == text:
            return


@pytest.mark.parametrize("threads", LOOPS)
def test_a_room_across_loops_relays_in_order_without_loss_or_duplicates(start_server, threads):
    server = start_with_loops(start_server, threads, UNLIMITED_PUBLISHING)
    count = 2 * threads + 1
    members = []
    for index in range(count):
        ws = connect(f"{server.ws}/rooms/across?name=m{index}", compression=None).__enter__()
        members.append(ws)
        # Every member so far sees this join, counted once, in the order of the joins.
        for ws in members:
            expect_notice(ws, f"* m{index} joined ({index + 1} online)")
    per_sender = 40

    def send_all(index, ws):
        for seq in range(per_sender):
            ws.send(f"{index}:{seq}")

    senders = [threading.Thread(target=send_all, args=(index, ws)) for index, ws in enumerate(members)]
    for thread in senders:
        thread.start()
    for thread in senders:
        thread.join()
    for index, ws in enumerate(members):
        seen = {}
        for _ in range(per_sender * (count - 1)):
            sender, seq = map(int, ws.recv(timeout=PATIENCE).split(":"))
            assert sender != index, "a member got its own message back"
            assert seq == seen.get(sender, -1) + 1, "messages from one sender were lost, repeated or reordered"
            seen[sender] = seq
        assert sorted(seen) == [other for other in range(count) if other != index]
    # Leaving: the others see each leave once, with the exact count left.
    for leaving in range(count - 1):
        members[leaving].close()
        for ws in members[leaving + 1:]:
            expect_notice(ws, f"* m{leaving} left ({count - 1 - leaving} online)")
    members[-1].close()


@pytest.mark.parametrize("threads", LOOPS)
def test_a_group_across_loops_gives_every_subscriber_the_one_order(start_server, threads):
    server = start_with_loops(start_server, threads)
    clients = [signup(server, f"u{index}")[0] for index in range(2 * threads)]
    group = group_with(*clients)
    for client in clients:
        client.subscribe(group)
    per_sender = 10
    sent = {index: [client.submit("send", group=group, text=f"{index}:{seq}", clientId=f"c{index}-{seq}")
                    for seq in range(per_sender)]
            for index, client in enumerate(clients)}
    acknowledged = {}
    for index, client in enumerate(clients):
        for request_id in sent[index]:
            reply = client.wait_reply(request_id)
            assert reply["op"] == "ok", reply
            acknowledged[reply["message"]["id"]] = index
    assert len(acknowledged) == per_sender * len(clients), "every send is stored once"
    orders = []
    for index, client in enumerate(clients):
        received = [client.expect_event("message", group=group)["message"]
                    for _ in range(per_sender * (len(clients) - 1))]
        ids = [message["id"] for message in received]
        assert len(set(ids)) == len(ids), "a message event came twice"
        assert all(acknowledged[message_id] != index for message_id in ids), "a sender got its own message"
        for sender in range(len(clients)):
            texts = [message["text"] for message in received if acknowledged[message["id"]] == sender]
            if sender != index:
                assert texts == [f"{sender}:{seq}" for seq in range(per_sender)], "one sender's order"
        orders.append((index, ids))
    # The one order of the group: any two subscribers see the messages both got in the same order.
    for index, ids in orders:
        for other, other_ids in orders:
            common = set(ids) & set(other_ids)
            assert [i for i in ids if i in common] == [i for i in other_ids if i in common]
    # Presence is counted on the chat loop: everyone is online in the group.
    assert clients[0].ok("groups")["groups"][0]["online"] == len(clients)
    for client in clients:
        client.close()


@pytest.mark.parametrize("threads", [2, 4])
def test_sigterm_closes_the_connections_of_every_loop_with_1001(start_server, threads):
    server = start_with_loops(start_server, threads)
    clients = [connect(f"{server.ws}/rooms/bye?notices=0", compression=None).__enter__()
               for _ in range(2 * threads)]
    chat = signup(server, "leaver")[0]
    server.process.send_signal(signal.SIGTERM)
    for ws in clients:
        try:
            while True:
                ws.recv(timeout=PATIENCE)
        except ConnectionClosed as closed:
            assert closed.rcvd is not None and closed.rcvd.code == 1001
    assert chat.close_code() == 1001
    assert server.process.wait(timeout=PATIENCE) == 0
