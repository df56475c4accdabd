"""Fixtures for the end-to-end tests: a real switchboard binary on a loopback port."""

import functools
import os
import shutil
import signal
import subprocess
import tempfile

import pytest
import websockets.sync.client

# How long a test waits for something that must happen (a reply, an event, a handshake). It bounds
# a failing test and is never what a passing test measures: on a busy machine, where a handshake
# can take seconds, a tight budget would fail a correct server.
PATIENCE = 60

# The websockets client with the patient opening handshake every test uses.
connect = functools.partial(websockets.sync.client.connect, open_timeout=PATIENCE)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def binary_path():
    """The switchboard binary to test: $SWITCHBOARD_BIN, else the debug build."""
    path = os.environ.get("SWITCHBOARD_BIN") or os.path.join(ROOT, ".build", "debug", "switchboard")
    if not os.path.exists(path):
        pytest.exit(f"no switchboard binary at {path}: run `swift build` first", returncode=2)
    return path


class RunningServer:
    """One server process on 127.0.0.1 with its own data folder."""

    def __init__(self, args=(), env=None, data=None):
        self.owns_data = data is None
        self.data = data or tempfile.mkdtemp(prefix="switchboard-e2e-")
        environment = dict(os.environ)
        # The tests sign up many users from 127.0.0.1; test_abuse_chat.py sets its own.
        environment.setdefault("SWITCHBOARD_SIGNUPS_PER_HOUR", "100000")
        environment.update(env or {})
        # The log goes to a file, not a pipe: nobody reads a pipe while a test runs, and a server
        # that logged 64 KiB into one (slow flushes on a loaded disk, say) would block on it.
        descriptor, self.log_path = tempfile.mkstemp(prefix="switchboard-e2e-log-", suffix=".txt")
        with os.fdopen(descriptor, "w") as log:
            self.process = subprocess.Popen(
                [binary_path(), "--host", "127.0.0.1", "--port", "0", "--data", self.data, *args],
                stdout=subprocess.PIPE, stderr=log, env=environment, cwd=ROOT, text=True)
        self.urls = {}
        while True:
            line = self.process.stdout.readline()
            if not line:
                self.process.wait()
                raise RuntimeError("server exited before listening: " + self.log())
            if line.startswith("listening on "):
                url = line.split()[-1]
                scheme = url.split("://")[0]
                self.urls[scheme] = url
                self.port = int(url.rsplit(":", 1)[1]) if scheme == "ws" else getattr(self, "port", None)
                if scheme == "wss":
                    self.tls_port = int(url.rsplit(":", 1)[1])
                expected = 2 if "--tls-cert" in args else 1
                if len(self.urls) == expected:
                    break

    @property
    def ws(self):
        return f"ws://127.0.0.1:{self.port}"

    @property
    def http(self):
        return f"http://127.0.0.1:{self.port}"

    def log(self):
        """Everything the server has logged so far."""
        with open(self.log_path) as log:
            return log.read()

    def stop(self, sig=signal.SIGTERM, timeout=10):
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


def make_certificate(folder):
    """A fresh self-signed pair for localhost in `folder` (a pathlib.Path), made by the server's
    own `cert` command: every call makes a different key and certificate."""
    result = subprocess.run([binary_path(), "cert", "--self-signed", "--out", str(folder)],
                            capture_output=True, text=True, timeout=PATIENCE)
    assert result.returncode == 0, result.stderr
    return folder / "cert.pem", folder / "key.pem"


@pytest.fixture(scope="session")
def certificate(tmp_path_factory):
    """One certificate and key for every TLS test: (cert path, key path)."""
    return tuple(str(path) for path in make_certificate(tmp_path_factory.mktemp("certificate")))


@pytest.fixture
def start_server():
    """Starts servers on demand; every one is stopped at the end of the test."""
    servers = []

    def start(*args, env=None, data=None):
        server = RunningServer(args, env=env, data=data)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop(signal.SIGKILL)
    for server in servers:
        os.remove(server.log_path)
        if server.owns_data:
            shutil.rmtree(server.data, ignore_errors=True)


@pytest.fixture
def server(start_server):
    """A server with short timers so timeout behaviour is observable in a test."""
    return start_server("--idle-timeout", "3", "--ping-interval", "1")


# Lifts the /rooms publishing rate for tests that publish megabytes as fast as they can.
UNLIMITED_PUBLISHING = {"SWITCHBOARD_ROOM_MESSAGES_PER_SECOND": "1000000",
                        "SWITCHBOARD_ROOM_BYTES_PER_SECOND": "1000000000"}


def publish_past_a_reader_that_stopped(publisher, watcher, stopped_name):
    """Sends 20 MB in batches of 200 KB that `watcher` reads before the next batch, so a reader
    that keeps up never has more than a batch queued while the member `stopped_name`, which never
    reads, overflows any limit of a few MiB. Asserts the watcher got every message in order and
    saw that member leave."""
    message = "x" * 4000
    left_notice = f"* {stopped_name} left (2 online)"
    saw_leave = False
    sent = 0
    for _ in range(100):
        for _ in range(50):
            publisher.send(f"{sent:05d}{message}")
            sent += 1
        received = sent - 50
        while received < sent:
            text = watcher.recv(timeout=PATIENCE)
            if text == left_notice:
                saw_leave = True
                continue
            assert text.startswith(f"{received:05d}"), "the watcher lost or reordered messages"
            received += 1
    if not saw_leave:
        assert watcher.recv(timeout=PATIENCE) == left_notice


def free_port():
    """A loopback port nothing listens on now (bound with port 0, then released)."""
    import socket
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class RunningRedis:
    """A redis-server of the test's own on 127.0.0.1 and a free port, without persistence unless
    `args` ask for it; ready once it says so on stdout."""

    def __init__(self, *args, port=None):
        self.port = port or free_port()
        self.folder = tempfile.mkdtemp(prefix="switchboard-redis-")
        self.args = args
        self.launch()

    def launch(self):
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", self.folder, *self.args],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for line in self.process.stdout:
            if "Ready to accept connections" in line:
                break
        else:
            raise RuntimeError(f"redis-server on port {self.port} exited before it was ready")

    def restart(self):
        """Kills Redis with SIGKILL and starts it again on the same port and folder: what it
        persisted (with `--appendonly yes`) is all it has."""
        self.process.kill()
        self.process.wait()
        self.process.stdout.close()
        self.launch()

    @property
    def url(self):
        return f"redis://127.0.0.1:{self.port}"

    def stop(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.process.stdout.close()
        shutil.rmtree(self.folder, ignore_errors=True)


@pytest.fixture
def start_redis():
    """Starts redis-servers on demand; every one is killed at the end of the test."""
    servers = []

    def start(*args, port=None):
        redis = RunningRedis(*args, port=port)
        servers.append(redis)
        return redis

    yield start
    for redis in servers:
        redis.stop()
