"""`switchboard health`: the probe container health checks and scripts run instead of curl."""

import socket
import subprocess

from conftest import PATIENCE, ROOT, binary_path


def health(*args, env=None):
    return subprocess.run([binary_path(), "health", *args], capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=PATIENCE)


def test_exits_0_when_healthz_answers_ok(server):
    result = health("--url", server.http + "/healthz")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"switchboard health: {server.http}/healthz: ok\n"


def test_asks_healthz_when_the_url_has_no_path(server):
    assert health("--url", server.http).returncode == 0


def test_takes_the_port_from_the_environment_as_the_server_does(server):
    # Config/switchboard.json says 8080; SWITCHBOARD_PORT wins, as it does for the server.
    result = health(env={"SWITCHBOARD_PORT": str(server.port)})
    assert result.returncode == 0, result.stderr
    assert f"http://127.0.0.1:{server.port}/healthz: ok" in result.stdout


def test_exits_1_when_nothing_listens():
    # A bound socket that does not listen refuses connections and keeps the port taken.
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        result = health("--url", f"http://127.0.0.1:{closed.getsockname()[1]}/healthz")
    assert result.returncode == 1
    assert "Connection refused" in result.stderr


def test_exits_1_on_a_status_other_than_200(server):
    result = health("--url", server.http + "/nothing")
    assert result.returncode == 1
    assert "answered 'HTTP/1.1 404 Not Found'" in result.stderr


def test_exits_1_on_a_200_that_is_not_ok(server):
    result = health("--url", server.http + "/readyz")
    assert result.returncode == 1
    assert 'answered 200 without {"status":"ok"}' in result.stderr


def test_gives_up_on_a_server_that_accepts_and_never_answers():
    # The kernel completes the handshake into the backlog; nobody ever reads or writes.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        result = health("--timeout", "1", "--url", f"http://127.0.0.1:{silent.getsockname()[1]}/healthz")
    assert result.returncode == 1
    assert "read failed: Connection timed out" in result.stderr


def test_refuses_a_url_it_cannot_ask():
    result = health("--url", "https://127.0.0.1:8443/healthz")
    assert result.returncode == 2
    assert "--url must look like http://HOST[:PORT][/PATH]" in result.stderr
