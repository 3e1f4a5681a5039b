#!/usr/bin/env bash
# rest-e2e-*: e2e.py (README.md here) twice, its HTTP requests made by
# Python's requests and then by curl. Its Kafka side is
# confluent-kafka-python with the schema registry extras, which the
# registry suite pins: this check uses that suite's requirements file, in
# a virtualenv of its own under $COMPAT_CACHE (schemathesis, in
# requirements.txt here, pins other versions of shared packages).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv=$COMPAT_CACHE/rest-e2e-python-venv
req=$here/../registry/requirements.txt
want=$(sha256sum "$req" | cut -d' ' -f1)
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.requirements.sha256" 2>/dev/null)" != "$want" ]; then
  echo "rest: installing $(grep -c '==' "$req") pinned Python packages into $venv"
  rm -rf "$venv"
  python3 -m venv "$venv" &&
    PIP_CACHE_DIR=$COMPAT_CACHE/pip "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$req" || exit 1
  echo "$want" >"$venv/.requirements.sha256"
fi
command -v curl >/dev/null || { echo "rest: the e2e check needs curl" >&2; exit 1; }
fail=0
PYTHONDONTWRITEBYTECODE=1 "$venv/bin/python" "$here/e2e.py" --http requests || fail=1
PYTHONDONTWRITEBYTECODE=1 "$venv/bin/python" "$here/e2e.py" --http curl || fail=1
exit $fail
