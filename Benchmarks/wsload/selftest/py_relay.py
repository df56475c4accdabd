#!/usr/bin/env python3
"""A tiny room relay on Python `websockets` for validating wsload (loopback only).

Every message a connection of /rooms/<room> sends goes, unchanged and in order, to every other
connection of that room (websockets.broadcast: no back-pressure, so nothing is dropped).

  py_relay.py PORT [--tls CERT KEY] [--deflate] [--server-no-context-takeover]

--deflate turns on permessage-deflate with websockets' defaults (server and client context
takeover, 12-bit windows) unless --server-no-context-takeover asks the server to reset its
compressor per message. Prints "listening on ws(s)://127.0.0.1:PORT" once ready.
"""
import argparse
import asyncio
import ssl

from websockets.asyncio.server import broadcast, serve
from websockets.extensions.permessage_deflate import ServerPerMessageDeflateFactory


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("port", type=int)
    ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    ap.add_argument("--deflate", action="store_true")
    ap.add_argument("--server-no-context-takeover", action="store_true")
    opts = ap.parse_args()

    rooms = {}

    async def handler(ws):
        path = ws.request.path.split("?", 1)[0]
        if not path.startswith("/rooms/"):
            await ws.close(1008, "no such path")
            return
        room = rooms.setdefault(path, set())
        room.add(ws)
        try:
            async for message in ws:
                broadcast([other for other in room if other is not ws], message)
        finally:
            room.discard(ws)

    context = None
    if opts.tls:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*opts.tls)
    extensions = None
    if opts.deflate:
        extensions = [ServerPerMessageDeflateFactory(
            server_no_context_takeover=opts.server_no_context_takeover,
            server_max_window_bits=12, client_max_window_bits=12, compress_settings={"memLevel": 5})]
    async with serve(handler, "127.0.0.1", opts.port, ssl=context, compression=None,
                     extensions=extensions, max_size=None, ping_interval=None, max_queue=None):
        print(f"listening on {'wss' if context else 'ws'}://127.0.0.1:{opts.port}", flush=True)
        await asyncio.Future()


asyncio.run(main())
