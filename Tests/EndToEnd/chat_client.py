"""A small client for the JSON protocol on /ws (docs/protocol.md, "The JSON protocol: /ws"), over the real
Python `websockets` sync client.

A `ChatClient` numbers its requests, returns the reply carrying the same id and keeps every event
(a frame without an id) that arrives in between, so a test can ask for it afterwards with
`expect_event` or check that none came with `no_event`.
"""

import itertools
import json
import socket
import struct
import time
import uuid

from websockets.exceptions import ConnectionClosed
from conftest import PATIENCE, connect

PASSWORD = "correct horse battery staple"


class ChatError(AssertionError):
    """A reply was not what the test expected; carries the reply for the message."""


def _matches(frame, match):
    """True when every `match` field equals the frame's field, or satisfies it when callable."""
    for key, wanted in match.items():
        if key not in frame:
            return False
        value = frame[key]
        if callable(wanted):
            if not wanted(value):
                return False
        elif value != wanted:
            return False
    return True


class ChatClient:
    """One WebSocket connection to /ws; not thread-safe (one thread per client)."""

    def __init__(self, server, token=None, query="", headers=None, open_timeout=PATIENCE, path="/ws", source=None):
        url = f"{server.ws}{path}"
        params = []
        if token is not None:
            params.append(f"token={token}")
        if query:
            params.append(query)
        if params:
            url += "?" + "&".join(params)
        self.url = url
        # `source` picks the client's loopback address (127.0.0.2, ...) for per-address limits.
        sock = socket.create_connection(("127.0.0.1", server.port), source_address=(source, 0)) if source else None
        self.ws = connect(url, compression=None, max_size=2 ** 24, open_timeout=open_timeout,
                          additional_headers=headers, sock=sock).__enter__()
        self.ids = itertools.count(1)
        self.events = []
        self.replies = {}
        self.transcript = []
        self.user = None
        self.token = token

    # Low level: frames.

    def send_json(self, obj):
        self.ws.send(json.dumps(obj))

    def send_raw(self, data):
        """Sends a text frame (str) or a binary frame (bytes) exactly as given."""
        self.ws.send(data)

    def recv_json(self, timeout):
        """Receives one frame, records it in the transcript and returns it parsed."""
        raw = self.ws.recv(timeout=timeout)
        self.transcript.append(raw)
        frame = json.loads(raw)
        assert isinstance(frame, dict), f"server sent a frame that is not a JSON object: {raw!r}"
        return frame

    def _file(self, frame):
        """Keeps a frame that is not the one being waited for: replies by id, events in order."""
        if "id" in frame:
            self.replies[frame["id"]] = frame
        else:
            self.events.append(frame)

    def recv_any(self, timeout=PATIENCE):
        """The next frame, reply or event, from the buffers first, else from the wire."""
        if self.events:
            return self.events.pop(0)
        return self.recv_json(timeout)

    # Requests.

    def submit(self, op, args=None, **kwargs):
        """Sends a request without waiting; returns its id."""
        request_id = next(self.ids)
        body = {"op": op, "id": request_id}
        body.update(args or {})
        body.update(kwargs)
        self.send_json(body)
        return request_id

    def wait_reply(self, request_id, timeout=PATIENCE):
        """Waits for the reply with `request_id`, buffering everything else."""
        deadline = time.monotonic() + timeout
        while request_id not in self.replies:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no reply to request {request_id} within {timeout} s")
            self._file(self.recv_json(remaining))
        return self.replies.pop(request_id)

    def request(self, op, args=None, timeout=PATIENCE, **kwargs):
        """Sends `{"op": op, "id": n, ...}` and returns the reply with id n."""
        return self.wait_reply(self.submit(op, args, **kwargs), timeout)

    def ok(self, op, args=None, **kwargs):
        """A request that must succeed; returns the `ok` reply."""
        reply = self.request(op, args, **kwargs)
        if reply.get("op") != "ok":
            raise ChatError(f"{op} {args or kwargs} failed: {reply}")
        return reply

    def error(self, op, args=None, **kwargs):
        """A request that must fail; returns the `error` reply after checking its shape."""
        reply = self.request(op, args, **kwargs)
        if reply.get("op") != "error":
            raise ChatError(f"{op} {args or kwargs} should have failed: {reply}")
        assert isinstance(reply.get("code"), str), reply
        assert isinstance(reply.get("message"), str) and reply["message"].strip(), \
            f"an error needs a human message: {reply}"
        return reply

    def code(self, op, args=None, **kwargs):
        """The error code of a request that must fail."""
        return self.error(op, args, **kwargs)["code"]

    # Events.

    def expect_event(self, op, timeout=PATIENCE, **match):
        """Waits for an event `op` whose fields match (values or predicates); returns it.

        Events that do not match stay buffered for later calls.
        """
        for index, frame in enumerate(self.events):
            if frame.get("op") == op and _matches(frame, match):
                return self.events.pop(index)
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no {op} event matching {match} within {timeout} s; "
                                   f"buffered: {self.events}")
            frame = self.recv_json(remaining)
            if "id" not in frame and frame.get("op") == op and _matches(frame, match):
                return frame
            self._file(frame)

    def no_event(self, op, within=0.5, **match):
        """Passes when no event `op` matching `match` arrives within `within` seconds.

        A bounded wait for "nothing comes", not a claim about speed.
        """
        deadline = time.monotonic() + within
        while True:
            for frame in self.events:
                if frame.get("op") == op and _matches(frame, match):
                    raise ChatError(f"unexpected {op} event: {frame}")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            try:
                self._file(self.recv_json(remaining))
            except TimeoutError:
                return

    def drain(self, within=0.3):
        """Drops every buffered event and whatever arrives within `within` seconds."""
        self.events.clear()
        deadline = time.monotonic() + within
        while (remaining := deadline - time.monotonic()) > 0:
            try:
                self._file(self.recv_json(remaining))
            except TimeoutError:
                break
        self.events.clear()

    # Conveniences over the operations.

    def subscribe(self, group, **args):
        return self.ok("subscribe", group=group, **args)

    def send_text(self, group, text, **args):
        return self.ok("send", group=group, text=text, **args)["message"]

    # Ending the connection.

    def close(self):
        try:
            self.ws.close()
        except (OSError, ConnectionClosed):
            pass

    def reset(self):
        """Vanishes with a TCP reset: SO_LINGER 0 makes close() send RST instead of FIN."""
        sock = self.ws.socket
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()

    def close_code(self, timeout=PATIENCE):
        """Reads until the server closes; returns the close code it sent (None if none)."""
        deadline = time.monotonic() + timeout
        try:
            while (remaining := deadline - time.monotonic()) > 0:
                self.ws.recv(timeout=remaining)
        except ConnectionClosed as closed:
            return closed.rcvd.code if closed.rcvd is not None else None
        raise TimeoutError(f"the server did not close the connection within {timeout} s")


def unique_email(name):
    return f"{name.lower()}-{uuid.uuid4().hex[:12]}@example.test"


def signup(server, name, password=PASSWORD, email=None, **extra):
    """Signs up a new user on a new connection; returns (client, token, user)."""
    client = ChatClient(server)
    client.email = email or unique_email(name)
    client.password = password
    reply = client.ok("signup", email=client.email, password=password, name=name, **extra)
    client.token = reply["token"]
    client.user = reply["user"]
    return client, reply["token"], reply["user"]


def connect_as(server, token):
    """A new connection authenticated with `auth`; returns the client."""
    client = ChatClient(server)
    reply = client.ok("auth", token=token)
    client.user = reply["user"]
    client.token = token
    return client


def group_with(owner, *others, name="room"):
    """Creates a group as `owner` and has every other client join it by invite; returns its id."""
    group = owner.ok("create", name=name)["group"]
    if others:
        invite = owner.ok("invite", group=group["id"])["invite"]
        for other in others:
            other.ok("join", invite=invite)
    return group["id"]


def send_many(client, group, texts, prefix="c"):
    """Sends every text, pipelined, and returns the acknowledged messages in sending order."""
    ids = [client.submit("send", group=group, text=text, clientId=f"{prefix}{index}")
           for index, text in enumerate(texts)]
    messages = []
    for request_id in ids:
        reply = client.wait_reply(request_id, timeout=30)
        assert reply["op"] == "ok", reply
        messages.append(reply["message"])
    return messages


def fake_id():
    """A well-formed push id that names nothing on the server."""
    return "-Zz" + uuid.uuid4().hex[:17]
