"""The command line itself (README, "Configuration"): version, help and bad flags."""

import os
import re
import subprocess

from conftest import binary_path


def run(*args):
    return subprocess.run([binary_path(), *args], capture_output=True, text=True, timeout=30)


def test_version_prints_a_semantic_version_and_exits_0():
    result = run("--version")
    assert result.returncode == 0, result.stderr
    assert re.fullmatch(r"\d+\.\d+\.\d+\n", result.stdout)


def test_help_names_every_fixed_flag():
    result = run("serve", "--help")
    assert result.returncode == 0, result.stderr
    for flag in ("--config", "--host", "--port", "--tls-port", "--tls-cert", "--tls-key", "--data",
                 "--durability", "--idle-timeout", "--ping-interval", "--log-level"):
        assert flag in result.stdout


def test_an_unknown_flag_exits_2_naming_it():
    result = run("--no-such-flag")
    assert result.returncode == 2
    assert "--no-such-flag" in result.stderr


def test_help_names_the_redis_flag():
    result = run("serve", "--help")
    assert result.returncode == 0, result.stderr
    assert "--redis" in result.stdout


def test_a_bad_redis_url_or_node_id_stops_the_start_naming_the_setting():
    for args, env, setting in ((["--redis", "http://localhost:6379"], {}, "redis"),
                               ([], {"SWITCHBOARD_REDIS": "redis://host:port"}, "redis"),
                               ([], {"SWITCHBOARD_NODE_ID": "no spaces"}, "nodeId")):
        result = subprocess.run([binary_path(), "--host", "127.0.0.1", "--port", "0", *args],
                                env=env, capture_output=True, text=True, timeout=30)
        assert result.returncode == 2, result.stderr
        assert f"setting '{setting}'" in result.stderr


def test_a_refused_secret_is_named_but_not_printed(tmp_path):
    for env, setting, secret in (({"SWITCHBOARD_ADMIN_TOKEN": "short-admin-secret"}, "adminToken", "short-admin-secret"),
                                 ({"SWITCHBOARD_AUTH_SECRET": "short-auth-secret"}, "authSecret", "short-auth-secret"),
                                 ({"SWITCHBOARD_REDIS": "redis://user:hunter2-pass@host:port"}, "redis", "hunter2-pass")):
        result = subprocess.run([binary_path(), "--host", "127.0.0.1", "--port", "0", "--data", str(tmp_path)],
                                env=env, capture_output=True, text=True, timeout=30)
        assert result.returncode == 2, result.stderr
        assert f"setting '{setting}'" in result.stderr and secret not in result.stderr, result.stderr


def test_a_setting_without_its_partner_stops_the_start_naming_both(tmp_path):
    # A certificate without its key would start without TLS; a webhook without the secret that
    # signs it would not start at all: both are configuration mistakes, exit 2.
    for args, env, names in ((["--tls-cert", "cert.pem"], {}, ("tlsCert", "tlsKey")),
                             (["--tls-key", "key.pem"], {}, ("tlsCert", "tlsKey")),
                             ([], {"SWITCHBOARD_PRESENCE_WEBHOOK": "http://127.0.0.1:9/hook"}, ("presenceWebhook", "webhookSecret")),
                             ([], {"SWITCHBOARD_OFFLINE_WEBHOOK": "http://127.0.0.1:9/hook"}, ("offlineWebhook", "webhookSecret"))):
        result = subprocess.run([binary_path(), "--host", "127.0.0.1", "--port", "0", "--data", str(tmp_path), *args],
                                env=env, capture_output=True, text=True, timeout=30)
        assert result.returncode == 2, result.stderr
        for name in names:
            assert name in result.stderr, result.stderr


def environment_of(server):
    """The environment the server process started with, as raw bytes. The C library cuts
    `GLIBC_TUNABLES` there into its parts (a NUL after each value), so tunables are looked
    for one by one."""
    with open(f"/proc/{server.process.pid}/environ", "rb") as environ:
        return environ.read().split(b"\0")


def test_serve_starts_again_once_asking_glibc_for_a_larger_thread_cache(start_server):
    # docs/architecture.md, "Memory": the same process (same pid), started again with the tunable.
    server = start_server()
    assert b"GLIBC_TUNABLES=glibc.malloc.tcache_count=256" in environment_of(server)
    # Started by its own path, so the process keeps the binary's name (ps, top, pkill).
    with open(f"/proc/{server.process.pid}/comm") as comm:
        assert comm.read().strip() == os.path.basename(binary_path())[:15]
    kept = environment_of(start_server(env={"GLIBC_TUNABLES": "glibc.malloc.arena_max=4"}))
    assert b"GLIBC_TUNABLES=glibc.malloc.arena_max=4" in kept
    assert b"glibc.malloc.tcache_count=256" in kept


def test_an_operators_thread_cache_setting_stands(start_server):
    environment = environment_of(start_server(env={"GLIBC_TUNABLES": "glibc.malloc.tcache_count=7"}))
    assert b"GLIBC_TUNABLES=glibc.malloc.tcache_count=7" in environment
    assert not any(b"tcache_count=256" in entry for entry in environment)
