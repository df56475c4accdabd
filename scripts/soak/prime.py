"""One signup on /ws before the soak's descriptor baseline (scripts/soak/run): the first
password hash starts libdispatch's worker pool, whose epoll and eventfd descriptors then stay
for the life of the process and would otherwise read as two descriptors not given back.

    python3 prime.py PORT"""

import asyncio
import json
import sys

import wsproto


async def main(port):
    reader, writer, status, _ = await wsproto.upgrade(port, "/ws", "127.0.3.1")
    assert status == 101, f"upgrade answered {status}"
    writer.write(wsproto.frame(0x1, json.dumps(
        {"op": "signup", "id": 1, "email": "prime@soak.test", "password": "soak prime", "name": "prime"}).encode()))
    _, _, _, payload = await asyncio.wait_for(wsproto.read_frame(reader), 30)
    assert json.loads(payload).get("op") == "ok", payload
    writer.write(wsproto.close_frame())
    await wsproto.until_close(reader)
    writer.transport.abort()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1])))
