"""A small Server-Sent Events client for /api/v1/presence/stream (docs/operations.md, "The presence
stream"), over the standard library's http.client, which undoes the chunked framing."""

import http.client
import json

from conftest import PATIENCE

# Admin tokens are at least 32 bytes.
ADMIN_TOKEN = "monitor-test-admin-token-0123456789abcdef"


class EventStream:
    """One open stream. `next_event` returns {"id", "event", "data"} with `data` parsed as JSON;
    comments (heartbeats) and `retry` lines are skipped. Every read waits at most PATIENCE."""

    def __init__(self, server, admin_token=ADMIN_TOKEN, last_event_id=None, query=""):
        self.connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=PATIENCE)
        headers = {}
        if admin_token is not None:
            headers["Authorization"] = f"Bearer {admin_token}"
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        self.connection.request("GET", "/api/v1/presence/stream" + query, headers=headers)
        self.response = self.connection.getresponse()
        self.status = self.response.status
        self.seen = []

    def next_event(self):
        fields = {}
        while True:
            line = self.response.readline()
            if not line:
                raise EOFError("the stream ended")
            line = line.decode().rstrip("\n")
            if line == "":
                if "data" in fields:
                    event = {"id": fields.get("id"), "event": fields.get("event", "message"),
                             "data": json.loads(fields["data"])}
                    self.seen.append(event)
                    return event
                fields = {}
                continue
            if line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            fields[name] = value[1:] if value.startswith(" ") else value

    def expect(self, event_name, **match):
        """The next event called `event_name` whose data has every `match` field equal to the
        value given, or satisfying it when the value is callable."""
        while True:
            event = self.next_event()
            if event["event"] != event_name:
                continue
            data = event["data"]
            if all(key in data and (wanted(data[key]) if callable(wanted) else data[key] == wanted)
                   for key, wanted in match.items()):
                return event

    def close(self):
        self.connection.close()


def admin_server(start_server, *args, env=None, data=None):
    """A server with the test admin token and short timers (idle timeout 3 s)."""
    environment = {"SWITCHBOARD_ADMIN_TOKEN": ADMIN_TOKEN}
    environment.update(env or {})
    return start_server("--idle-timeout", "3", "--ping-interval", "1", *args, env=environment, data=data)


def has(item):
    return lambda items: item in items
