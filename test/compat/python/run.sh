#!/usr/bin/env bash
# Python clients suite: confluent-kafka-python (librdkafka) and kafka-python.
# Contract: test/compat/README.md. Installs the pinned requirements into a
# virtualenv under $COMPAT_CACHE and runs compat.py against $SAMSA_BOOTSTRAP.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${SAMSA_BOOTSTRAP:?}" "${COMPAT_RESULTS:?}" "${COMPAT_CACHE:?}"

venv=$COMPAT_CACHE/python-venv
req=$here/requirements.txt
stamp=$venv/.requirements.sha256
want=$(sha256sum "$req" | cut -d' ' -f1)
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "python: installing $(grep -c '==' "$req") pinned packages into $venv"
  python3 -m venv "$venv"
  PIP_CACHE_DIR=$COMPAT_CACHE/pip "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$req"
  echo "$want" >"$stamp"
fi

exec "$venv/bin/python" "$here/compat.py" "$@"
