"""Uploads under load: 20 clients upload at once while a plain room relays at a steady rate. Every
upload is answered and readable, every relayed message arrives in order, and the relay's p99 with
and without the uploads is printed (a figure for BENCHMARKS.md, not an assertion: timings on a
shared machine are no test)."""

import threading
import time

from conftest import PATIENCE, UNLIMITED_PUBLISHING, connect
from chat_client import signup
from media_client import image_of_size, request, upload

UPLOADERS = 20
UPLOADS_EACH = 10
SIZE = 100 * 1024


def relay(publisher, receiver, count, first, latencies):
    """Sends `count` numbered messages about every 5 ms and reads each back on `receiver`,
    recording its latency; asserts they all arrive, in order."""
    received = []

    def read():
        for _ in range(count):
            text = receiver.recv(timeout=PATIENCE)
            sent_ns, _, seq = text.partition(" ")
            received.append(int(seq))
            latencies.append((time.monotonic_ns() - int(sent_ns)) / 1e6)
    reader = threading.Thread(target=read)
    reader.start()
    for number in range(first, first + count):
        publisher.send(f"{time.monotonic_ns()} {number}")
        time.sleep(0.005)
    reader.join(timeout=PATIENCE)
    assert received == list(range(first, first + count)), "a relayed message was lost or reordered"


def p99(values):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


def test_twenty_clients_upload_while_a_room_relays(start_server):
    server = start_server(env=UNLIMITED_PUBLISHING)
    tokens = [signup(server, f"user{index}")[1] for index in range(UPLOADERS)]
    results = []

    def uploads(token, index):
        for round_ in range(UPLOADS_EACH):
            body = image_of_size(SIZE)
            status, reply = upload(server, token, body)
            results.append((status, reply, body))

    url = server.ws + "/rooms/load?notices=0"
    with connect(url) as publisher, connect(url) as receiver:
        quiet = []
        relay(publisher, receiver, 200, 0, quiet)
        threads = [threading.Thread(target=uploads, args=(token, index)) for index, token in enumerate(tokens)]
        busy = []
        for thread in threads:
            thread.start()
        number = 200
        while any(thread.is_alive() for thread in threads):
            relay(publisher, receiver, 50, number, busy)
            number += 50
        for thread in threads:
            thread.join(timeout=PATIENCE)
    assert len(results) == UPLOADERS * UPLOADS_EACH
    assert all(status == 201 for status, _, _ in results), [r[1] for r in results if r[0] != 201][:3]
    for status, reply, body in results[:: UPLOADS_EACH]:
        assert request(server, "GET", reply["url"])[2] == body
    print(f"\nrelay p99 without uploads {p99(quiet):.2f} ms ({len(quiet)} messages), "
          f"during {len(results)} uploads of {SIZE} bytes from {UPLOADERS} clients {p99(busy):.2f} ms ({len(busy)} messages)")
