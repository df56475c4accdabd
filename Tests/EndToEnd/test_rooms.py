"""The plain relay /rooms/{room}, with real clients (Python websockets and websocat)."""

import select
import socket
import struct
import subprocess
import threading
import urllib.request


from conftest import PATIENCE, UNLIMITED_PUBLISHING, connect, publish_past_a_reader_that_stopped
from wsraw import RawClient


def join(server, room, name=None, notices=False):
    """Opens a room connection; the caller closes it (or the test's end does)."""
    query = [] if notices else ["notices=0"]
    if name:
        query.append(f"name={name}")
    return connect(f"{server.ws}/rooms/{room}?{'&'.join(query)}", compression=None).__enter__()


def test_room_of_twenty_relays_everything_in_order_to_everyone_else(server):
    members = [join(server, "big") for _ in range(20)]
    # A last message through everyone makes sure all twenty joined before anyone sends.
    per_sender = 50
    threads = []

    def send_all(index, ws):
        for seq in range(per_sender):
            ws.send(f"{index}:{seq}")

    for index, ws in enumerate(members):
        threads.append(threading.Thread(target=send_all, args=(index, ws)))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for index, ws in enumerate(members):
        seen = {}
        for _ in range(per_sender * 19):
            sender, seq = map(int, ws.recv(timeout=PATIENCE).split(":"))
            assert sender != index, "a member got its own message back"
            assert seq == seen.get(sender, -1) + 1, "messages from one sender arrived out of order"
            seen[sender] = seq
        assert len(seen) == 19
    for ws in members:
        ws.close()


def test_binary_frames_are_relayed_unchanged(server):
    with join(server, "bin") as a, join(server, "bin") as b:
        a.send(b"\x00\xffbinary")
        assert b.recv(timeout=PATIENCE) == b"\x00\xffbinary"


def test_rooms_do_not_leak_into_each_other(server):
    with join(server, "one") as a, join(server, "one") as b, join(server, "two") as c:
        a.send("for one")
        c.send("for two")
        assert b.recv(timeout=PATIENCE) == "for one"
        b.send("back to one")
        assert a.recv(timeout=PATIENCE) == "back to one"
        try:
            leaked = c.recv(timeout=0.5)
        except TimeoutError:
            leaked = None
        assert leaked is None


def test_notices_on_join_and_leave(server):
    alice = join(server, "lobby", name="alice", notices=True)
    assert alice.recv(timeout=PATIENCE) == "* alice joined (1 online)"
    bob = join(server, "lobby", name="bob", notices=True)
    assert alice.recv(timeout=PATIENCE) == "* bob joined (2 online)"
    assert bob.recv(timeout=PATIENCE) == "* bob joined (2 online)"
    quiet = join(server, "lobby", name="quiet")
    assert alice.recv(timeout=PATIENCE) == "* quiet joined (3 online)"
    quiet.close()
    assert alice.recv(timeout=PATIENCE) == "* quiet left (2 online)"
    bob.close()
    assert alice.recv(timeout=PATIENCE) == "* bob left (1 online)"
    alice.close()


def test_default_name_is_a_guest_name(server):
    with join(server, "guests", notices=True) as ws:
        notice = ws.recv(timeout=PATIENCE)
        assert notice.startswith("* guest-") and notice.endswith(" joined (1 online)")


def test_a_client_that_vanishes_with_a_reset_leaves_the_room(server):
    watcher = join(server, "reset", name="watcher", notices=True)
    assert watcher.recv(timeout=PATIENCE) == "* watcher joined (1 online)"
    ghost = RawClient(server.port, path="/rooms/reset?name=ghost")
    assert watcher.recv(timeout=PATIENCE) == "* ghost joined (2 online)"
    # SO_LINGER with a zero timeout turns close() into a TCP reset.
    ghost.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    ghost.sock.close()
    assert watcher.recv(timeout=PATIENCE) == "* ghost left (1 online)"
    watcher.close()


def test_a_silent_client_leaves_the_room_after_the_idle_timeout(server):
    watcher = join(server, "silent", name="watcher", notices=True)
    watcher.recv(timeout=PATIENCE)
    silent = RawClient(server.port, path="/rooms/silent?name=mute")
    assert watcher.recv(timeout=PATIENCE) == "* mute joined (2 online)"
    # The raw client never answers the server's pings.
    assert watcher.recv(timeout=PATIENCE) == "* mute left (1 online)"
    silent.close()
    watcher.close()


def test_websocat_sends_and_receives_in_a_room(server):
    url = f"{server.ws}/rooms/cli?notices=0&name=term"
    with join(server, "cli", name="listener", notices=True) as listener:
        assert listener.recv(timeout=PATIENCE) == "* listener joined (1 online)"
        result = subprocess.run(["websocat", "-t", url], input=b"hello from websocat\n",
                                capture_output=True, timeout=PATIENCE)
        assert result.returncode == 0, result.stderr
        assert listener.recv(timeout=PATIENCE) == "* term joined (2 online)"
        assert listener.recv(timeout=PATIENCE) == "hello from websocat\n"
        assert listener.recv(timeout=PATIENCE) == "* term left (1 online)"
        receiver = subprocess.Popen(["websocat", "-t", "-n", "-U", url], stdout=subprocess.PIPE)
        try:
            assert listener.recv(timeout=PATIENCE) == "* term joined (2 online)"
            listener.send("hello terminal")
            ready, _, _ = select.select([receiver.stdout], [], [], PATIENCE)
            assert ready, "websocat printed nothing"
            assert receiver.stdout.readline() == b"hello terminal\n"
        finally:
            receiver.kill()
            receiver.wait()


def test_a_client_that_stops_reading_is_dropped_without_slowing_the_room(start_server):
    server = start_server(env={"SWITCHBOARD_OUTBOUND_QUEUE_BYTES": "1048576", "SWITCHBOARD_MAX_MESSAGE_SIZE": "4096",
                               **UNLIMITED_PUBLISHING})
    watcher = join(server, "slow", name="watcher", notices=True)
    assert watcher.recv(timeout=PATIENCE) == "* watcher joined (1 online)"
    slow = RawClient(server.port, path="/rooms/slow?name=sloth&notices=0")
    assert watcher.recv(timeout=PATIENCE) == "* sloth joined (2 online)"
    publisher = join(server, "slow", name="pub")
    assert watcher.recv(timeout=PATIENCE) == "* pub joined (3 online)"
    publish_past_a_reader_that_stopped(publisher, watcher, "sloth")
    metrics = urllib.request.urlopen(server.http + "/metrics", timeout=PATIENCE).read().decode()
    assert "switchboard_slow_consumers_dropped_total 1" in metrics
    slow.close()
    publisher.close()
    watcher.close()
