"""Serving the browser app's files (docs/protocol.md, "Static files"): types, ETag and 304, HEAD,
gzip, security headers, app routes, and paths that try to leave the public folder."""

import gzip
import os
import shutil
import tempfile

import pytest

from test_http import get, raw_request


@pytest.fixture
def public_folder():
    """A public folder with a page, a script, a subfolder, and links into and out of it, next to
    a secret file outside it."""
    root = tempfile.mkdtemp(prefix="switchboard-public-")
    public = os.path.join(root, "public")
    os.makedirs(os.path.join(public, "css"))
    with open(os.path.join(root, "secret.txt"), "w") as secret:
        secret.write("not for the web")
    with open(os.path.join(public, "index.html"), "w") as page:
        page.write("<!doctype html><title>test</title>" + "<p>switchboard</p>" * 50)
    with open(os.path.join(public, "css", "site.css"), "w") as css:
        css.write("body { color: black; }\n" * 40)
    os.symlink(os.path.join(root, "secret.txt"), os.path.join(public, "leak.txt"))
    os.symlink(root, os.path.join(public, "up"))
    os.symlink(os.path.join(public, "index.html"), os.path.join(public, "home.html"))
    yield public
    shutil.rmtree(root)


def test_the_app_files_have_their_types_and_security_headers(server):
    for path, content_type in [("/", "text/html; charset=utf-8"), ("/switchboard.js", "text/javascript; charset=utf-8"),
                               ("/app.js", "text/javascript; charset=utf-8"), ("/style.css", "text/css; charset=utf-8"),
                               ("/favicon.svg", "image/svg+xml"), ("/console.html", "text/html; charset=utf-8")]:
        status, headers, _ = get(server.http + path)
        assert status == 200, path
        assert headers["Content-Type"] == content_type, path
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert headers["Referrer-Policy"] == "no-referrer"
        assert headers["Cache-Control"] == "no-cache"
        policy = headers["Content-Security-Policy"]
        assert "default-src 'self'" in policy and "frame-ancestors 'none'" in policy
        assert f"connect-src 'self' ws://127.0.0.1:{server.port} wss://127.0.0.1:{server.port};" in policy
        assert "img-src 'self' http: https:" in policy
        assert "unsafe-inline" not in policy and "unsafe-eval" not in policy


def test_invite_links_answer_with_the_app(server):
    _, _, home = get(server.http + "/")
    status, headers, body = get(server.http + "/join/AbCdEf123_-x")
    assert status == 200
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    assert body == home
    assert get(server.http + "/nope.js")[0] == 404


def test_a_matching_etag_gets_304_and_head_gets_no_body(server):
    status, headers, body = get(server.http + "/switchboard.js")
    etag = headers["ETag"]
    assert status == 200 and etag.startswith('"')
    reply = raw_request(server.port, b"GET /switchboard.js HTTP/1.1\r\nHost: x\r\nConnection: close\r\nIf-None-Match: " + etag.encode() + b"\r\n\r\n")
    assert reply.startswith(b"HTTP/1.1 304 ")
    assert reply.endswith(b"\r\n\r\n") and b"Content-Length" not in reply
    assert f"ETag: {etag}".encode() in reply
    head = raw_request(server.port, b"HEAD /switchboard.js HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 ")
    assert f"Content-Length: {len(body)}".encode() in head
    assert head.endswith(b"\r\n\r\n")
    assert raw_request(server.port, b"HEAD /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").endswith(b"\r\n\r\n")


def test_gzip_goes_to_clients_that_accept_it(server):
    _, plain_headers, plain = get(server.http + "/app.js")
    status, headers, body = get(server.http + "/app.js", {"Accept-Encoding": "gzip"})
    assert status == 200
    assert headers["Content-Encoding"] == "gzip"
    assert headers["Vary"] == "Accept-Encoding"
    assert len(body) < len(plain) / 2
    assert gzip.decompress(body) == plain
    assert headers["ETag"] != plain_headers["ETag"]
    assert "Content-Encoding" not in plain_headers
    assert "Content-Encoding" not in get(server.http + "/app.js", {"Accept-Encoding": "gzip;q=0"})[1]


@pytest.mark.parametrize("target", [
    b"/../README.md", b"/%2e%2e/README.md", b"/%2E%2E%2FREADME.md", b"/..%2fREADME.md", b"/.%2e/README.md",
    b"/css/../../README.md", b"//etc/passwd", b"/%2fetc%2fpasswd", b"/leak.txt", b"/up/secret.txt",
    b"/up/public/index.html", b"/./index.html", b"/index.html%00.js",
])
def test_paths_that_leave_the_public_folder_are_refused(start_server, public_folder, target):
    server = start_server(env={"SWITCHBOARD_PUBLIC": public_folder})
    reply = raw_request(server.port, b"GET " + target + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    status = int(reply.split(b" ", 2)[1])
    assert status in (400, 404), reply[:200]
    assert b"not for the web" not in reply and b"swift-tools-version" not in reply


def test_links_inside_the_folder_and_subfolders_are_served(start_server, public_folder):
    server = start_server(env={"SWITCHBOARD_PUBLIC": public_folder})
    assert get(server.http + "/css/site.css")[1]["Content-Type"] == "text/css; charset=utf-8"
    assert get(server.http + "/home.html")[2] == get(server.http + "/index.html")[2]


def test_a_missing_public_folder_is_a_log_line_not_a_crash(start_server):
    server = start_server(env={"SWITCHBOARD_PUBLIC": "/nonexistent/public"})
    assert get(server.http + "/")[0] == 404
    assert get(server.http + "/healthz")[0] == 200
    server.stop()
    assert "the public folder /nonexistent/public does not exist" in server.log()
