"""permessage-deflate (RFC 7692) with real clients: Python websockets and Node ws."""

import os
import subprocess
import textwrap
import zlib

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.extensions.permessage_deflate import ClientPerMessageDeflateFactory

from chromium import CHROMIUM_ECHO, CHROMIUM_ROOM, open_chromium
from wsraw import RawClient
from conftest import PATIENCE, connect


def chat_text(size):
    words = "hello there how are you doing today see you at the meeting later ok ".split()
    text = ""
    index = 0
    while len(text) < size:
        text += words[index % len(words)] + " "
        index += 1
    return text[:size]


def test_python_websockets_negotiates_deflate_and_round_trips(server):
    with connect(server.ws + "/echo", max_size=2 << 20) as ws:
        assert "permessage-deflate" in ws.response.headers["Sec-WebSocket-Extensions"]
        for size in [1, 100, 200, 5000, 1 << 20]:
            text = chat_text(size)
            ws.send(text)
            assert ws.recv() == text
        data = os.urandom(50000)
        ws.send(data)
        assert ws.recv() == data


def test_compressed_and_plain_members_share_a_room(server):
    compressed = [connect(server.ws + "/rooms/z?notices=0").__enter__() for _ in range(3)]
    plain = connect(server.ws + "/rooms/z?notices=0", compression=None).__enter__()
    text = chat_text(2000)
    compressed[0].send(text)
    for ws in compressed[1:] + [plain]:
        assert ws.recv(timeout=PATIENCE) == text
    plain.send(text + "!")
    for ws in compressed:
        assert ws.recv(timeout=PATIENCE) == text + "!"
    for ws in compressed + [plain]:
        ws.close()


def test_compression_off_in_config_declines_the_offer(start_server):
    server = start_server(env={"SWITCHBOARD_COMPRESSION": "false"})
    with connect(server.ws + "/echo") as ws:
        assert "Sec-WebSocket-Extensions" not in ws.response.headers
        ws.send("plain")
        assert ws.recv() == "plain"


def test_zip_bomb_is_closed_with_1009(server):
    # 4 MiB of zeros compresses to a few KiB; inflated it passes the 1 MiB limit.
    with connect(server.ws + "/echo") as ws:
        ws.send(b"\x00" * (4 << 20))
        try:
            ws.recv(timeout=PATIENCE)
            raised = None
        except ConnectionClosed as closed:
            raised = closed
        assert raised is not None and raised.rcvd.code == 1009


@pytest.mark.parametrize("client_context_takeover", ["true", "false"])
def test_node_ws_with_per_message_deflate(start_server, client_context_takeover):
    # With "false" the answer carries client_no_context_takeover, which Node ws did not offer.
    server = start_server(env={"SWITCHBOARD_COMPRESSION_CLIENT_CONTEXT_TAKEOVER": client_context_takeover})
    script = textwrap.dedent(f"""
        const WebSocket = require('ws');
        const ws = new WebSocket('{server.ws}/echo', {{ perMessageDeflate: true }});
        const text = 'chat '.repeat(4000);
        ws.on('open', () => ws.send(text));
        ws.on('message', (data, isBinary) => {{
            const ok = !isBinary && data.toString() === text;
            console.log(JSON.stringify({{ ok, extensions: ws.extensions }}));
            ws.close();
        }});
        ws.on('error', (error) => {{ console.log(JSON.stringify({{ ok: false, error: String(error) }})); process.exit(1); }});
    """)
    result = subprocess.run(["node", "-e", script], capture_output=True, text=True, timeout=30,
                            env={**os.environ, "NODE_PATH": "/usr/share/nodejs:/usr/lib/nodejs"})
    assert result.returncode == 0, result.stderr
    assert '"ok":true' in result.stdout
    assert "permessage-deflate" in result.stdout


def deflate_message(text, strategy=zlib.Z_HUFFMAN_ONLY, level=9, mem_level=9, compressor=None):
    """One message as a client sends it: raw deflate, sync flush, trailer stripped. A fresh
    compressor makes it stand alone (no context takeover); pass one to keep its context.
    Huffman-only output differs from anything the server's level-1 deflater makes."""
    compressor = compressor or zlib.compressobj(level, zlib.DEFLATED, -15, mem_level, strategy)
    data = compressor.compress(text.encode()) + compressor.flush(zlib.Z_SYNC_FLUSH)
    assert data.endswith(b"\x00\x00\xff\xff")
    return data[:-4]


def inflate_message(payload, window_bits=15):
    return zlib.decompressobj(-window_bits).decompress(payload + b"\x00\x00\xff\xff").decode()


def test_a_message_compressed_without_context_takeover_is_relayed_as_its_sender_compressed_it(server):
    room = "/rooms/passon?notices=0"
    sender = RawClient(server.port, room, headers={
        "Sec-WebSocket-Extensions": "permessage-deflate; client_no_context_takeover"})
    assert "client_no_context_takeover" in sender.response_head
    window15 = RawClient(server.port, room, headers={"Sec-WebSocket-Extensions": "permessage-deflate"})
    window10 = RawClient(server.port, room, headers={
        "Sec-WebSocket-Extensions": "permessage-deflate; server_max_window_bits=10"})
    plain = RawClient(server.port, room)
    with connect(server.ws + room) as python_client:
        text = chat_text(3000)
        sent = deflate_message(text)
        sender.send(1, sent, rsv=4)

        # Members inflating with a 15-bit window get the sender's bytes, not a second compression.
        assert window15.recv_frame_with_rsv() == (True, 4, 1, sent)
        assert python_client.recv(timeout=PATIENCE) == text
        # A smaller window might not hold the sender's matches: the server compresses for it.
        fin, rsv, opcode, payload = window10.recv_frame_with_rsv()
        assert (fin, rsv, opcode) == (True, 4, 1) and payload != sent
        assert inflate_message(payload, window_bits=10) == text
        assert plain.recv_frame_with_rsv() == (True, 0, 1, text.encode())

    # The same with Python websockets as the sender, told to compress without context takeover:
    # its zlib stream (default level, 15-bit window) arrives byte for byte.
    no_takeover = ClientPerMessageDeflateFactory(client_no_context_takeover=True)
    with connect(server.ws + room, compression=None, extensions=[no_takeover]) as python_sender:
        assert "client_no_context_takeover" in python_sender.response.headers["Sec-WebSocket-Extensions"]
        python_sender.send(text)
        fin, rsv, opcode, payload = window15.recv_frame_with_rsv()
        assert (fin, rsv, opcode) == (True, 4, 1)
        assert payload == deflate_message(text, strategy=zlib.Z_DEFAULT_STRATEGY, level=-1, mem_level=8)
        assert inflate_message(payload) == text
    for client in (sender, window15, window10, plain):
        client.close()


def test_a_message_compressed_with_context_takeover_is_compressed_again(server):
    room = "/rooms/keeps?notices=0"
    sender = RawClient(server.port, room, headers={"Sec-WebSocket-Extensions": "permessage-deflate"})
    assert "client_no_context_takeover" not in sender.response_head
    member = RawClient(server.port, room, headers={"Sec-WebSocket-Extensions": "permessage-deflate"})
    text = chat_text(3000)
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = deflate_message(text, compressor=compressor)
    # The second message is mostly a reference back into the first one: alone it means nothing.
    second = deflate_message(text, compressor=compressor)
    sender.send(1, first, rsv=4)
    sender.send(1, second, rsv=4)
    for _ in range(2):
        fin, rsv, opcode, payload = member.recv_frame_with_rsv()
        assert (fin, rsv, opcode) == (True, 4, 1) and payload not in (first, second)
        assert inflate_message(payload) == text
    sender.close()
    member.close()


def test_clients_asked_to_compress_without_context_have_their_messages_passed_on(start_server):
    server = start_server(env={"SWITCHBOARD_COMPRESSION_CLIENT_CONTEXT_TAKEOVER": "false"})
    room = "/rooms/asked?notices=0"
    member = RawClient(server.port, room, headers={"Sec-WebSocket-Extensions": "permessage-deflate"})
    assert "client_no_context_takeover" in member.response_head
    # Python websockets' default offer, answered with client_no_context_takeover it did not ask for.
    with connect(server.ws + room) as sender:
        assert "client_no_context_takeover" in sender.response.headers["Sec-WebSocket-Extensions"]
        text = chat_text(3000)
        for _ in range(2):
            sender.send(text)
            fin, rsv, opcode, payload = member.recv_frame_with_rsv()
            # websockets compresses with memLevel 5 at zlib's default level, each message alone.
            assert (fin, rsv, opcode) == (True, 4, 1)
            assert payload == deflate_message(text, strategy=zlib.Z_DEFAULT_STRATEGY, level=-1, mem_level=5)
    member.close()


def test_chromium_accepts_client_no_context_takeover_it_did_not_offer(start_server):
    server = start_server(env={"SWITCHBOARD_COMPRESSION_CLIENT_CONTEXT_TAKEOVER": "false"})
    browser = open_chromium()
    try:
        browser.get(server.http + "/")
        # Messages of 128 bytes and more go back as Chromium compressed them (checked byte for
        # byte with Python websockets above); here Chromium has to inflate its own streams.
        echo = browser.execute_async_script(CHROMIUM_ECHO, server.ws)
        assert echo == {"same": True, "count": 300,
                        "extensions": "permessage-deflate; server_no_context_takeover; client_no_context_takeover"}
        assert browser.execute_async_script(CHROMIUM_ROOM, server.ws) == {"same": True}
    finally:
        browser.quit()


def test_clients_without_context_takeover_share_an_inflater_without_mixing_their_messages(server):
    # The server inflates such clients' messages with one shared inflater; a message is inflated
    # whole at its last frame, so fragments interleaved across connections never meet in it.
    room = "/rooms/shared?notices=0"
    offer = {"Sec-WebSocket-Extensions": "permessage-deflate; client_no_context_takeover"}
    first, second = RawClient(server.port, room, headers=offer), RawClient(server.port, room, headers=offer)
    reader = RawClient(server.port, room)
    one, two = chat_text(2000), "another " + chat_text(1500)
    left, right = deflate_message(one), deflate_message(two)
    first.send(1, left[:100], fin=False, rsv=4)
    second.send(1, right[:50], fin=False, rsv=4)
    first.send(0, left[100:])
    second.send(0, right[50:])
    assert sorted([reader.recv_frame()[2], reader.recv_frame()[2]]) == sorted([one.encode(), two.encode()])
    # A corrupt message fails its own connection only; the other goes on inflating.
    second.send(1, b"\xff\xff\xff", rsv=4)
    assert second.recv_close() == 1007
    first.send(1, left, rsv=4)
    assert reader.recv_frame()[2] == one.encode()
    for client in (first, second, reader):
        client.close()


def test_big_messages_are_inflated_in_steps_beside_a_zip_bomb_without_mixing(server):
    # A message inflates at most 64 KiB per readiness event; an unfinished one sets a shared
    # inflater's stream aside, and the frames behind it wait, so senders sharing the inflater
    # keep their own messages and order while a zip bomb is inflated in steps next to them.
    room = "/rooms/steps?notices=0"
    offer = {"Sec-WebSocket-Extensions": "permessage-deflate; client_no_context_takeover"}
    first, second = RawClient(server.port, room, headers=offer), RawClient(server.port, room, headers=offer)
    bomber = RawClient(server.port, "/echo", headers={"Sec-WebSocket-Extensions": "permessage-deflate"})
    reader = RawClient(server.port, room)
    one, two = chat_text(600_000), "another " + chat_text(500_000)
    first.sock.sendall(RawClient.frame(1, deflate_message(one), rsv=4) + RawClient.frame(1, b"one after"))
    bomb = zlib.compressobj(9, zlib.DEFLATED, -15)
    bomber.send(1, (bomb.compress(bytes(8 << 20)) + bomb.flush(zlib.Z_SYNC_FLUSH))[:-4], rsv=4)
    second.sock.sendall(RawClient.frame(1, deflate_message(two), rsv=4) + RawClient.frame(1, b"two after"))
    received = [reader.recv_frame()[2] for _ in range(4)]
    assert sorted(received) == sorted([one.encode(), b"one after", two.encode(), b"two after"])
    assert received.index(one.encode()) < received.index(b"one after")
    assert received.index(two.encode()) < received.index(b"two after")
    assert bomber.recv_close() == 1009
    for client in (first, second, bomber, reader):
        client.close()
