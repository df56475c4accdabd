"""The command line itself (README, "Configuration"): version, help and bad flags."""

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
