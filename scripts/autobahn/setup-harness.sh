#!/usr/bin/env bash
# Builds the Autobahn|Testsuite fuzzingclient harness under Python 3 (no Python 2 needed).
# Route: official autobahntestsuite 25.10.1 sdist (py2 code) + lib2to3 + py3port.patch,
# running on autobahn 0.10.9 (the version the suite pins; it supports py3) + wsaccel.
# Usage: bash scripts/autobahn/setup-harness.sh DEST   (needs: python3.11 (lib2to3), gcc, PyPI)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
DEST="${1:-$HERE}"
PY="${PYTHON:-python3}"
mkdir -p "$DEST/dl" && cd "$DEST"
[ -d venv ] || "$PY" -m venv venv
. venv/bin/activate
pip install -q "autobahn==0.10.9" "txaio==26.6.1" "six" "Twisted==26.10.0" "pyOpenSSL" "service_identity" \
               "jinja2" "wsaccel==0.6.7" "setuptools<81" "websockets==17.4"
# autobahn 0.10.9 py3 bug: float division in sendFrame(payload_len=...)  (used by 1.1.x, 9.x, ...)
P=$(python -c 'import autobahn.websocket.protocol as p; print(p.__file__)')
sed -i 's|range(payload_len / len(payload))|range(payload_len // len(payload))|' "$P"
grep -q 'payload_len // len(payload)' "$P"
# testsuite sources: py2 sdist -> LF line endings -> 2to3 -> py3 patch
pip download -q --no-deps --no-binary :all: "autobahntestsuite==25.10.1" -d dl
rm -rf dl/autobahntestsuite-25.10.1 src && tar xzf dl/autobahntestsuite-25.10.1.tar.gz -C dl
mkdir -p src && cp -r dl/autobahntestsuite-25.10.1/autobahntestsuite src/
find src/autobahntestsuite -name '*.py' -exec sed -i 's/\r$//' {} +
python -W ignore -m lib2to3 -w -n -j 4 src/autobahntestsuite > 2to3.log 2>&1
find src/autobahntestsuite -name '*.py' -exec sed -i 's/\r$//' {} +
(cd src && patch -p1 < "$HERE/py3port.patch")
# make `wstest` available in the venv
echo "$DEST/src" > "$(python -c 'import site; print(site.getsitepackages()[0])')/autobahntestsuite-src.pth"
printf '#!%s\nimport sys\nfrom autobahntestsuite.wstest import run\nsys.exit(run())\n' "$DEST/venv/bin/python" > venv/bin/wstest
chmod +x venv/bin/wstest
wstest -a
