"""The one-time move from the first layout (docs/durability.md, "Migrating"): a data folder with
`tree.json` and `journal.jsonl`, as scripts/bench/make-store.py writes it, is converted on the
first start, and a `kill -9` at any moment of the conversion loses nothing: the next start
finishes it. History pages back across many segment files."""

import os
import random
import shutil
import signal
import subprocess
import sys
import time

from chat_client import ChatClient
from conftest import ROOT, binary_path

GROUPS = 4
SNAPSHOT = 6000
JOURNAL = 600
ENV = {"SWITCHBOARD_SEGMENT_BYTES": "16384", "SWITCHBOARD_RECENT_MESSAGES": "20"}


def make_store(folder):
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "bench", "make-store.py"), folder,
                    "--groups", str(GROUPS), "--messages", str(SNAPSHOT), "--journal", str(JOURNAL),
                    "--users", "4", "--members", "2"], check=True, capture_output=True)


def every_message(client, group):
    """The group's whole history, oldest first, paging back 97 at a time (not a divisor of
    anything, so pages straddle segment boundaries)."""
    page = client.ok("history", group=group, limit=97)
    messages = page["messages"]
    while page["more"]:
        page = client.ok("history", group=group, before=messages[0]["id"], limit=97)
        messages = page["messages"] + messages
    return messages


def check_store(server):
    """Every message make-store.py wrote is there once, in order, in its group."""
    client = ChatClient(server)
    # make-store.py gives every user this password.
    client.ok("login", email="user0@example.com", password="password123")
    groups = client.ok("groups")["groups"]
    assert len(groups) >= 1
    for summary in groups:
        messages = every_message(client, summary["id"])
        ids = [m["id"] for m in messages]
        assert ids == sorted(ids) and len(set(ids)) == len(ids)
        numbers = [int(m["text"].split()[0][1:]) for m in messages]
        assert numbers == sorted(numbers)
        assert len(numbers) == (SNAPSHOT + JOURNAL) // GROUPS
        assert numbers[0] % GROUPS == numbers[-1] % GROUPS
        after = client.ok("history", group=summary["id"], after=ids[10], limit=50)["messages"]
        assert [m["id"] for m in after] == ids[11:61]
    client.close()


def test_a_first_layout_folder_is_converted_once(start_server, tmp_path):
    data = str(tmp_path / "data")
    make_store(data)
    server = start_server(env=ENV, data=data)
    check_store(server)
    names = os.listdir(data)
    assert "tree.json" not in names and "manifest.json" in names, names
    segments = sum(len(files) for _, _, files in os.walk(os.path.join(data, "messages")))
    assert segments > 4 * GROUPS, "the history is spread over several segments per group"
    server.stop(signal.SIGKILL)
    check_store(start_server(env=ENV, data=data))


def test_kill_9_during_the_conversion_loses_nothing(start_server, tmp_path):
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    pristine = str(tmp_path / "pristine")
    make_store(pristine)
    data = str(tmp_path / "data")
    shutil.copytree(pristine, data)
    environment = {**os.environ, **ENV}
    for _ in range(4):
        process = subprocess.Popen([binary_path(), "--host", "127.0.0.1", "--port", "0", "--data", data],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment, cwd=ROOT)
        time.sleep(rng.uniform(0.0, 0.6))
        process.send_signal(signal.SIGKILL)
        process.wait()
    server = start_server(env=ENV, data=data)
    try:
        check_store(server)
    except AssertionError as failure:
        raise AssertionError(f"seed {seed}: {failure}") from failure
