"""permessage-deflate (RFC 7692) with real clients: Python websockets and Node ws."""

import os
import subprocess
import textwrap

from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect


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
        assert ws.recv(timeout=5) == text
    plain.send(text + "!")
    for ws in compressed:
        assert ws.recv(timeout=5) == text + "!"
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
            ws.recv(timeout=10)
            raised = None
        except ConnectionClosed as closed:
            raised = closed
        assert raised is not None and raised.rcvd.code == 1009


def test_node_ws_with_per_message_deflate(server):
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
