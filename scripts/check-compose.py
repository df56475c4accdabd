#!/usr/bin/env python3
"""Checks docker/compose.yaml for what a deployment relies on, without Docker: the server's
build, restart policy, health check, data volume, read-only certificates, ports the image
exposes, SWITCHBOARD_* variables that name real settings, and the monitoring profile's
Prometheus with files that exist. Prints each problem and exits 1 when there is one.

Usage: scripts/check-compose.py   (from anywhere; needs PyYAML)
"""

import json
import os
import re
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCKER = os.path.join(ROOT, "docker")


def environment_name(key):
    """`idleTimeout` -> `SWITCHBOARD_IDLE_TIMEOUT`, as the server names its variables."""
    return "SWITCHBOARD_" + re.sub(r"([A-Z])", r"_\1", key).upper()


def container_port(mapping):
    return int(str(mapping).rsplit(":", 1)[-1].split("/")[0])


def check(compose, settings, exposed, problems):
    services = compose.get("services") or {}
    declared_volumes = set((compose.get("volumes") or {}).keys())
    server = services.get("switchboard")
    if server is None:
        problems.append("no `switchboard` service")
        return
    build = server.get("build") or {}
    dockerfile = os.path.join(DOCKER, build.get("context", "."), build.get("dockerfile", "Dockerfile"))
    if not os.path.isfile(dockerfile):
        problems.append(f"switchboard: build names {dockerfile}, which does not exist")
    if server.get("restart") not in ("always", "unless-stopped", "on-failure"):
        problems.append("switchboard: `restart` must bring the server back (always, unless-stopped, on-failure)")
    if (server.get("healthcheck") or {}).get("test") != ["CMD", "switchboard", "health"]:
        problems.append('switchboard: `healthcheck.test` must be ["CMD", "switchboard", "health"]')
    # From the right: the source may be `${VARIABLE:-default}`.
    mounts = [str(volume).rsplit(":", 2) for volume in server.get("volumes") or []]
    if not any(len(m) >= 2 and m[1] == "/data" and m[0] in declared_volumes for m in mounts):
        problems.append("switchboard: /data must be a named volume declared under top-level `volumes`")
    if not any(len(m) == 3 and m[1] == "/certs" and m[2] == "ro" for m in mounts):
        problems.append("switchboard: certificates must be mounted read-only at /certs")
    ports = {container_port(port) for port in server.get("ports") or []}
    if ports != exposed:
        problems.append(f"switchboard: publishes container ports {sorted(ports)}, the image exposes {sorted(exposed)}")
    known = {environment_name(key) for key in settings}
    for name in server.get("environment") or {}:
        if name not in known:
            problems.append(f"switchboard: {name} is not a setting (Config/switchboard.json)")

    prometheus = services.get("prometheus")
    if prometheus is None:
        problems.append("no `prometheus` service")
        return
    if "monitoring" not in (prometheus.get("profiles") or []):
        problems.append("prometheus: must be in the `monitoring` profile")
    for volume in prometheus.get("volumes") or []:
        source = str(volume).rsplit(":", 2)[0]
        if source.startswith("."):
            if not os.path.isfile(os.path.join(DOCKER, source)):
                problems.append(f"prometheus: mounts {source}, which does not exist in docker/")
        elif source not in declared_volumes:
            problems.append(f"prometheus: volume {source} is not declared under top-level `volumes`")


def main():
    with open(os.path.join(DOCKER, "compose.yaml")) as file:
        compose = yaml.safe_load(file)
    with open(os.path.join(ROOT, "Config", "switchboard.json")) as file:
        settings = json.load(file)
    with open(os.path.join(DOCKER, "Dockerfile")) as file:
        exposed = {int(port) for line in file if line.startswith("EXPOSE ") for port in line.split()[1:]}
    problems = []
    check(compose, settings, exposed, problems)
    for problem in problems:
        print(f"docker/compose.yaml: {problem}", file=sys.stderr)
    if problems:
        sys.exit(1)
    print("docker/compose.yaml: ok")


if __name__ == "__main__":
    main()
