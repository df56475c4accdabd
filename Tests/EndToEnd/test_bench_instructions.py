"""scripts/bench/instructions.sh, the benchmark tool that counts a build's user-space
instructions per acknowledged durable send under callgrind: against a real server, the two runs
it takes per build leave a positive count per ack, the loop thread's within the process's, and
it lists the functions that cost the most, in order."""

import os
import re
import shutil
import subprocess

from conftest import ROOT, binary_path

SCRIPT = os.path.join(ROOT, "scripts", "bench", "instructions.sh")


def test_instructions_per_ack_come_from_the_difference_of_two_runs(tmp_path):
    compiler = os.environ.get("CC") or shutil.which("gcc") or shutil.which("clang")
    assert compiler, "no C compiler (gcc or clang) to build Benchmarks/wsload"
    wsload = str(tmp_path / "wsload")
    built = subprocess.run([os.path.join(ROOT, "Benchmarks", "wsload", "build.sh"), wsload],
                           env={**os.environ, "CC": compiler}, capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    # One core is enough (a CI machine may have no second); a few senders keep valgrind brief.
    env = {**os.environ, "WSLOAD": wsload, "SERVER_CPU": "0", "LOAD_CPU": "0", "SENDERS": "4", "SHORT": "1",
           "LONG": "6", "TOP": "8", "OUT_DIR": str(tmp_path / "out")}
    result = subprocess.run(["bash", SCRIPT, binary_path()], env=env, capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    lines = result.stdout.splitlines()
    row = next((line for line in lines if line.startswith(os.path.basename(binary_path()) + " ")), None)
    assert row, result.stdout
    loop, whole, acks = (int(field) for field in row.split()[1:4])
    # The long run acknowledged more than the short one, and each of those sends took the
    # loop thread some thousands of instructions at least (parsing, storing, answering).
    assert acks > 0, row
    assert 1_000 < loop <= whole, row
    # TOP=8: the eight functions with the most instructions of their own per ack, costliest first.
    costliest = [re.match(r"\s+(\d+)  \S", line) for line in lines[lines.index(row) + 1:]]
    counts = [int(match.group(1)) for match in costliest if match]
    assert len(counts) == 8, result.stdout
    assert counts == sorted(counts, reverse=True) and counts[-1] > 0 and counts[0] < loop, result.stdout
