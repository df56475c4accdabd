"""Certificate renewal on SIGHUP: new handshakes get the new pair, open wss:// connections carry
on, and a pair that does not load is refused while the previous one keeps serving."""

import os
import shutil
import signal
import ssl
import time

from conftest import PATIENCE, connect, make_certificate


def install(pair, live):
    """Puts a certificate and key where the server reads them, each file replaced at once, as
    ACME clients do."""
    for source, name in zip(pair, ("cert.pem", "key.pem")):
        shutil.copyfile(source, live / (name + ".new"))
        os.replace(live / (name + ".new"), live / name)


def reload(server, expected):
    """Sends SIGHUP and returns the log line that says what became of it."""
    def answers():
        return [line for line in server.log().splitlines() if "received SIGHUP" in line]
    before = len(answers())
    server.process.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + PATIENCE
    while len(answers()) == before:
        assert server.process.poll() is None, f"the server exited before logging {expected!r}"
        assert time.monotonic() < deadline, f"no answer to SIGHUP logged within {PATIENCE} s"
        time.sleep(0.05)
    line = answers()[before]
    assert expected in line, line
    return line


def member(server, trusted_certificate, name):
    """A wss:// member of one room that trusts only `trusted_certificate`."""
    context = ssl.create_default_context(cafile=str(trusted_certificate))
    return connect(f"wss://localhost:{server.tls_port}/rooms/renewal?notices=0&name={name}", ssl=context)


def served_certificate(connection):
    return connection.socket.getpeercert(binary_form=True)


def der(certificate):
    return ssl.PEM_cert_to_DER_cert(certificate.read_text())


def start_with(start_server, pair, live):
    live.mkdir()
    install(pair, live)
    return start_server("--tls-cert", str(live / "cert.pem"), "--tls-key", str(live / "key.pem"), "--tls-port", "0")


def test_new_handshakes_get_the_new_certificate_while_open_connections_keep_chatting(start_server, tmp_path):
    old = make_certificate(tmp_path / "old")
    new = make_certificate(tmp_path / "new")
    server = start_with(start_server, old, tmp_path / "live")
    with member(server, old[0], "before") as before, connect(f"{server.ws}/rooms/renewal?notices=0") as plain:
        before.send("before the renewal")
        assert plain.recv(timeout=PATIENCE) == "before the renewal"

        install(new, tmp_path / "live")
        reload(server, "TLS certificate reloaded")

        with member(server, new[0], "after") as after:
            assert served_certificate(after) == der(new[0])
            assert served_certificate(before) == der(old[0])
            before.send("still here")
            assert after.recv(timeout=PATIENCE) == "still here"
            assert plain.recv(timeout=PATIENCE) == "still here"
            after.send("welcome")
            assert before.recv(timeout=PATIENCE) == "welcome"


def test_a_pair_that_does_not_load_is_refused_and_the_old_one_keeps_serving(start_server, tmp_path):
    old = make_certificate(tmp_path / "old")
    new = make_certificate(tmp_path / "new")
    live = tmp_path / "live"
    server = start_with(start_server, old, live)
    with member(server, old[0], "before") as before:
        install((new[0], old[1]), live)
        assert "does not match the certificate" in reload(server, "TLS certificate refused")
        (live / "cert.pem").write_text("not a certificate\n")
        assert "could not load the certificate chain" in reload(server, "TLS certificate refused")

        with member(server, old[0], "during") as during:
            assert served_certificate(during) == der(old[0])
            before.send("the old pair still serves")
            assert during.recv(timeout=PATIENCE) == "the old pair still serves"

            install(new, live)
            reload(server, "TLS certificate reloaded")
            with member(server, new[0], "after") as after:
                assert served_certificate(after) == der(new[0])
                during.send("and the fixed pair loads")
                assert before.recv(timeout=PATIENCE) == "and the fixed pair loads"
                assert after.recv(timeout=PATIENCE) == "and the fixed pair loads"


def test_sighup_without_tls_leaves_the_server_running(server):
    reload(server, "TLS is off, nothing to reload")
    with connect(f"{server.ws}/echo") as echo:
        echo.send("still up")
        assert echo.recv(timeout=PATIENCE) == "still up"
