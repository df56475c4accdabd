"""RFC 6455 behaviour over a real socket: close codes, fragmentation, pings, limits."""

import os
import struct
import time


from wsraw import RawClient
from conftest import connect

TEXT, BINARY, CLOSE, PING, PONG = 1, 2, 8, 9, 10


def test_echo_round_trips_text_and_binary_up_to_one_mebibyte(server):
    with connect(server.ws + "/echo", max_size=2 << 20, compression=None) as ws:
        for size in [0, 1, 125, 126, 65535, 65536, 1 << 20]:
            text = "é" * (size // 2)
            ws.send(text)
            assert ws.recv() == text
            data = os.urandom(size)
            ws.send(data)
            assert ws.recv() == data


def test_unmasked_frame_is_closed_with_1002(server):
    client = RawClient(server.port)
    client.send(TEXT, b"hello", mask=False)
    assert client.recv_close() == 1002
    assert client.at_eof()


def test_invalid_utf8_is_closed_with_1007(server):
    client = RawClient(server.port)
    client.send(TEXT, b"\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xed\xa0\x80edited")
    assert client.recv_close() == 1007


def test_invalid_utf8_across_fragments_fails_fast(server):
    client = RawClient(server.port)
    client.send(TEXT, b"ok\xf4", fin=False)
    client.send(0, b"\x90", fin=False)
    assert client.recv_close() == 1007


def test_oversized_message_is_closed_with_1009(start_server):
    server = start_server(env={"SWITCHBOARD_MAX_MESSAGE_SIZE": "1024"})
    client = RawClient(server.port)
    client.send(BINARY, b"x" * 1025)
    assert client.recv_close() == 1009


def test_oversized_fragmented_message_is_closed_with_1009(start_server):
    server = start_server(env={"SWITCHBOARD_MAX_MESSAGE_SIZE": "1024"})
    client = RawClient(server.port)
    client.send(BINARY, b"x" * 600, fin=False)
    client.send(0, b"x" * 600, fin=True)
    assert client.recv_close() == 1009


def test_fragmented_message_with_a_ping_inside(start_server):
    # Default timers: the `server` fixture pings after 1 s of silence, and its PING could come
    # before the PONG on a loaded machine.
    client = RawClient(start_server().port)
    client.send(TEXT, b"Hello, ", fin=False)
    client.send(PING, b"are you there")
    client.send(0, b"World", fin=False)
    client.send(0, b"!", fin=True)
    assert client.recv_frame() == (True, PONG, b"are you there")
    assert client.recv_frame() == (True, TEXT, b"Hello, World!")


def test_reserved_bits_and_opcodes_are_closed_with_1002(server):
    for frame in [dict(opcode=TEXT, payload=b"x", rsv=2), dict(opcode=3, payload=b""), dict(opcode=PING, payload=b"x" * 126)]:
        client = RawClient(server.port)
        client.send(**frame)
        assert client.recv_close() == 1002, frame


def test_close_handshake_echoes_the_code(server):
    client = RawClient(server.port)
    client.send(CLOSE, struct.pack("!H", 1000) + b"bye")
    assert client.recv_close() == 1000
    assert client.at_eof()


def test_invalid_close_code_is_answered_with_1002(server):
    client = RawClient(server.port)
    client.send(CLOSE, struct.pack("!H", 1005))
    assert client.recv_close() == 1002


def test_server_pings_and_a_client_that_answers_stays(server):
    client = RawClient(server.port)
    fin, opcode, payload = client.recv_frame()
    assert opcode == PING
    deadline = time.monotonic() + 5
    # Keep answering for longer than the 3 s idle timeout: the connection must stay open.
    while time.monotonic() < deadline:
        client.send(PONG, payload)
        fin, opcode, payload = client.recv_frame()
        assert opcode == PING
    client.send(TEXT, b"still here")
    while True:
        _, opcode, payload = client.recv_frame()
        if opcode == TEXT:
            assert payload == b"still here"
            break


def test_python_websockets_client_answers_server_pings(server):
    with connect(server.ws + "/echo", compression=None) as ws:
        time.sleep(4.5)
        ws.send("alive")
        assert ws.recv() == "alive"


def test_idle_client_is_dropped(server):
    client = RawClient(server.port)
    # Never answer: the server pings after 1 s and gives up after 3 s of silence.
    assert client.recv_close() == 1001
    assert client.at_eof()


def test_upgrades_past_max_connections_get_503_and_a_freed_slot_is_reused(start_server):
    server = start_server(env={"SWITCHBOARD_MAX_CONNECTIONS": "2"})
    first = RawClient(server.port)
    second = RawClient(server.port)
    assert (first.status, second.status) == (101, 101)
    third = RawClient(server.port)
    assert third.status == 503
    assert third.at_eof(), "the refused connection is closed"
    assert '"error":"unavailable"' in third.buffer.decode("latin-1")
    first.send(CLOSE, struct.pack("!H", 1000))
    assert first.recv_close() == 1000
    assert first.at_eof()
    # Every socket counts until it is closed on both sides (docs/security.md); the slot frees
    # once the server has seen our end of stream.
    first.close()
    for _ in range(200):
        if RawClient(server.port).status == 101:
            break
        time.sleep(0.05)
    else:
        raise AssertionError("the freed slot was never reused")
