"""Presence and offline-delivery webhooks (docs/operations.md, "Webhooks"): batched POSTs signed
with HMAC-SHA256 over "<timestamp>.<body>", retried while the receiver is down, a bounded queue
whose overflow is dropped and counted."""

import contextlib
import hashlib
import hmac
import http.server
import json
import queue
import socket
import threading
import time
import urllib.request

from chat_client import group_with, signup
from conftest import PATIENCE, connect
from sse_client import admin_server

# Webhook secrets are at least 32 bytes.
SECRET = "webhook-test-secret-0123456789abcdef"


class Receiver:
    """A webhook receiver on a socket bound now and listening only once `start` is called, so
    until then every delivery is refused: the receiver is down. It checks every signature."""

    def __init__(self):
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.port = self.socket.getsockname()[1]
        self.events = queue.Queue()
        self.bad_signatures = 0
        self.server = None

    def start(self):
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                timestamp = self.headers["X-Switchboard-Timestamp"]
                expected = hmac.new(SECRET.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
                if not hmac.compare_digest(self.headers["X-Switchboard-Signature"], f"sha256={expected}") \
                        or abs(time.time() - int(timestamp)) > 300:
                    receiver.bad_signatures += 1
                    self.send_response(401)
                    self.end_headers()
                    return
                for event in json.loads(body)["events"]:
                    receiver.events.put((self.path, event))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.HTTPServer(("127.0.0.1", self.port), Handler, bind_and_activate=False)
        self.server.socket.close()
        self.server.socket = self.socket
        self.server.server_activate()
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def take(self, count):
        return [self.events.get(timeout=PATIENCE) for _ in range(count)]

    def close(self):
        if self.server:
            self.server.shutdown()
            self.server.server_close()
        else:
            self.socket.close()


@contextlib.contextmanager
def receiver():
    r = Receiver()
    try:
        yield r
    finally:
        r.close()


def metric(server, name, webhook):
    text = urllib.request.urlopen(server.http + "/metrics", timeout=PATIENCE).read().decode()
    for line in text.splitlines():
        if line.startswith(f'{name}{{webhook="{webhook}"}} '):
            return int(line.split()[-1])
    return 0


def wait_for(condition):
    """Polls `condition` until it holds; the bound is only there to end a failing test."""
    deadline = time.monotonic() + PATIENCE
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.1)


def webhook_server(start_server, port, limit=1000, kind="presence"):
    return admin_server(start_server, env={
        f"SWITCHBOARD_{kind.upper()}_WEBHOOK": f"http://127.0.0.1:{port}/hooks/{kind}",
        "SWITCHBOARD_WEBHOOK_SECRET": SECRET, "SWITCHBOARD_WEBHOOK_QUEUE_LIMIT": str(limit)})


def test_presence_changes_wait_for_a_receiver_that_was_down(start_server):
    with receiver() as hook, contextlib.ExitStack() as sockets:
        server = webhook_server(start_server, hook.port)
        for index in range(5):
            sockets.enter_context(connect(server.ws + f"/rooms/r{index}?name=u{index}&notices=0"))
        wait_for(lambda: metric(server, "switchboard_webhook_events_queued_total", "presence") == 5)
        wait_for(lambda: metric(server, "switchboard_webhook_failed_attempts_total", "presence") >= 2)
        hook.start()
        delivered = hook.take(5)
        assert all(path == "/hooks/presence" and event["type"] == "presence" for path, event in delivered)
        assert sorted(event["data"]["room"] for _, event in delivered) == [f"r{i}" for i in range(5)]
        assert all(event["data"]["joined"] == [f"u{event['data']['room'][1:]}"] for _, event in delivered)
        assert hook.bad_signatures == 0
        wait_for(lambda: metric(server, "switchboard_webhook_events_delivered_total", "presence") == 5)
        assert metric(server, "switchboard_webhook_events_dropped_total", "presence") == 0


def test_past_the_queue_bound_events_are_dropped_and_counted(start_server):
    with receiver() as hook, contextlib.ExitStack() as sockets:
        server = webhook_server(start_server, hook.port, limit=3)
        for index in range(12):
            sockets.enter_context(connect(server.ws + f"/rooms/r{index}?notices=0"))
        queued = lambda: metric(server, "switchboard_webhook_events_queued_total", "presence")
        dropped = lambda: metric(server, "switchboard_webhook_events_dropped_total", "presence")
        wait_for(lambda: queued() + dropped() == 12)
        # At most one batch in hand and a full queue behind it: 3 + 3 kept.
        assert queued() <= 6 and dropped() >= 6
        hook.start()
        assert len(hook.take(queued())) == queued()
        wait_for(lambda: metric(server, "switchboard_webhook_events_delivered_total", "presence") == queued())
        assert queued() + dropped() == 12 and hook.bad_signatures == 0


def test_a_message_for_offline_members_is_posted(start_server):
    with receiver() as hook:
        hook.start()
        server = webhook_server(start_server, hook.port, kind="offline")
        alice, _, alice_user = signup(server, "alice")
        bob, _, bob_user = signup(server, "bob")
        carol, _, _ = signup(server, "carol")
        group = group_with(alice, bob, carol, name="Trip")
        bob.close()
        sent = alice.send_text(group, "are you there?")
        path, event = hook.take(1)[0]
        assert path == "/hooks/offline" and event["type"] == "offline"
        assert event["data"]["group"] == group and event["data"]["name"] == "Trip"
        assert event["data"]["message"]["id"] == sent["id"]
        assert event["data"]["users"] == [bob_user["id"]], "carol is connected, alice sent it"
        assert alice_user["id"] not in event["data"]["users"]
        assert hook.bad_signatures == 0
