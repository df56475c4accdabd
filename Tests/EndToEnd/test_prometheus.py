"""/metrics held to Prometheus's own tools (docs/operations.md, "Metrics"): `promtool check metrics`
accepts the exposition, and a real Prometheus (Debian package `prometheus`: loopback only,
1 s scrape interval, a temporary folder) scrapes the server while clients connect and gives the
figures back through its query API."""

import contextlib
import json
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request

import pytest

from conftest import PATIENCE, connect
from sse_client import admin_server


def fetch(url):
    with urllib.request.urlopen(url, timeout=PATIENCE) as response:
        return response.read().decode()


def test_promtool_accepts_the_exposition(start_server):
    server = admin_server(start_server, env={
        "SWITCHBOARD_PRESENCE_WEBHOOK": "http://127.0.0.1:9/hook", "SWITCHBOARD_WEBHOOK_SECRET": "prometheus-test-webhook-secret-0123456789"})
    with connect(server.ws + "/rooms/lint?notices=0") as a, connect(server.ws + "/rooms/lint?notices=0") as b:
        a.send("counted")
        assert b.recv(timeout=PATIENCE) == "counted"
        text = fetch(server.http + "/metrics")
    for family in ["switchboard_delivery_latency_seconds", "switchboard_messages_received_total",
                   "switchboard_webhook_events_dropped_total", "switchboard_store_flush_seconds"]:
        assert f"# TYPE {family} " in text
    check = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True,
                           timeout=PATIENCE)
    assert check.returncode == 0, check.stdout + check.stderr


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def prometheus(target_port):
    """Prometheus scraping 127.0.0.1:`target_port` every second, listening on loopback only; its
    folder and process are gone afterwards. A port taken between the probe and the start is
    retried with another."""
    folder = tempfile.mkdtemp(prefix="switchboard-prometheus-")
    with open(f"{folder}/prometheus.yml", "w") as config:
        config.write(f"""global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: switchboard
    static_configs:
      - targets: ["127.0.0.1:{target_port}"]
""")
    process = None
    try:
        for _ in range(5):
            port = free_port()
            process = subprocess.Popen(
                ["prometheus", f"--config.file={folder}/prometheus.yml", f"--storage.tsdb.path={folder}/data",
                 f"--web.listen-address=127.0.0.1:{port}", "--storage.tsdb.retention.time=1h"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + PATIENCE
            while process.poll() is None and time.monotonic() < deadline:
                try:
                    if fetch(url + "/-/ready").startswith("Prometheus"):
                        yield url
                        return
                except OSError:
                    time.sleep(0.2)
            process.kill()
            process.wait()
        pytest.fail("Prometheus did not start")
    finally:
        if process and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=PATIENCE)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        shutil.rmtree(folder, ignore_errors=True)


def query_until(url, expression, wanted):
    """Polls the query API until `expression`'s single value satisfies `wanted`; the bound only
    ends a failing test."""
    deadline = time.monotonic() + PATIENCE
    last = None
    while time.monotonic() < deadline:
        answer = json.loads(fetch(f"{url}/api/v1/query?query={urllib.parse.quote(expression)}"))
        results = answer["data"]["result"]
        if results:
            last = float(results[0]["value"][1])
            if wanted(last):
                return last
        time.sleep(0.5)
    pytest.fail(f"{expression} never satisfied the test; last value {last}")


def test_a_real_prometheus_scrapes_the_figures(start_server):
    server = admin_server(start_server)
    with prometheus(server.port) as url, contextlib.ExitStack() as sockets:
        members = [sockets.enter_context(connect(server.ws + "/rooms/scraped?notices=0")) for _ in range(3)]
        for index in range(10):
            members[0].send(f"message {index}")
        for member in members[1:]:
            for index in range(10):
                assert member.recv(timeout=PATIENCE) == f"message {index}"
        query_until(url, 'up{job="switchboard"}', lambda value: value == 1)
        query_until(url, 'switchboard_connections{kind="room"}', lambda value: value == 3)
        query_until(url, 'switchboard_messages_received_total{endpoint="room"}', lambda value: value == 10)
        query_until(url, 'switchboard_messages_sent_total{endpoint="room"}', lambda value: value == 20)
        query_until(url, "switchboard_delivery_latency_seconds_count", lambda value: value >= 1)
        query_until(url, 'switchboard_rooms', lambda value: value == 1)
