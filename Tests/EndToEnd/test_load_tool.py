"""The load generator every benchmark figure comes from (Benchmarks/wsload): built from its
sources, it must pass its own checks, catch every fault a faulty relay injects (loss,
duplicates, reordering, misrouting, bad payloads), and count a clean run against this server,
on /rooms and on the chat protocol, as clean."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import UNLIMITED_PUBLISHING, free_port

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WSLOAD_DIR = os.path.join(ROOT, "Benchmarks", "wsload")


@pytest.fixture(scope="module")
def wsload(tmp_path_factory):
    """wsload built by its own build script, with gcc or else the toolchain's clang."""
    compiler = os.environ.get("CC") or shutil.which("gcc") or shutil.which("clang")
    assert compiler, "no C compiler (gcc or clang) to build Benchmarks/wsload"
    binary = str(tmp_path_factory.mktemp("wsload") / "wsload")
    result = subprocess.run([os.path.join(WSLOAD_DIR, "build.sh"), binary], env={**os.environ, "CC": compiler},
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return binary


def test_the_load_tool_catches_every_fault_and_passes_a_clean_server(wsload, start_server):
    server = start_server(env=UNLIMITED_PUBLISHING)
    result = subprocess.run([sys.executable, os.path.join(WSLOAD_DIR, "selftest", "selftest.py"), "--wsload", wsload,
                             "--port", str(free_port()), "--server-port", str(server.port)],
                            capture_output=True, text=True, timeout=600)
    summary = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert summary.endswith("passed, 0 failed"), summary
    # Its own checks, every faulty relay and the two clean cases against this server.
    assert int(summary.split()[0]) >= 26, summary


def test_a_chat_fanout_run_is_counted_clean(wsload, start_server):
    server = start_server()
    result = subprocess.run([wsload, "fanout", "--url", f"{server.ws}/ws", "--groups", "2", "--members", "4",
                             "--rate", "20", "--users", "2", "--duration", "2", "--warmup", "1", "--drain", "30", "-q"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    counts = json.loads(result.stdout.strip().splitlines()[-1])
    assert counts["ok"] and counts["sent"] > 0 and counts["acked"] == counts["sent"]
    # Every message goes to the 3 members besides its sender, each once and in order.
    assert counts["expected"] == 3 * counts["sent"]
    assert counts["delivered"] == counts["expected"]
    assert counts["lost"] == counts["duplicates"] == counts["out_of_order"] == counts["wrong_group"] == 0
