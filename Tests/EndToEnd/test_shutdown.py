"""SIGTERM: every WebSocket gets 1001, the process exits 0."""

import signal

from websockets.exceptions import ConnectionClosed

from wsraw import RawClient
from conftest import PATIENCE, connect


def test_sigterm_closes_every_websocket_with_1001_and_exits_zero(start_server):
    server = start_server()
    clients = [connect(f"{server.ws}/rooms/bye?notices=0", compression=None).__enter__() for _ in range(5)]
    raw = RawClient(server.port, path="/echo")
    server.process.send_signal(signal.SIGTERM)
    assert raw.recv_close() == 1001
    for ws in clients:
        try:
            while True:
                ws.recv(timeout=PATIENCE)
        except ConnectionClosed as closed:
            assert closed.rcvd is not None and closed.rcvd.code == 1001
    assert server.process.wait(timeout=PATIENCE) == 0
