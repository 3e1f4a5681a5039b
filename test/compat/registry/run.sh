#!/usr/bin/env bash
# Schema Registry suite (README.md here): drives the registry of the
# runner's samsa serve (SAMSA_REGISTRY_URL), or else starts `samsa
# registry` against $SAMSA_BOOTSTRAP on a free loopback port, with
# confluent-kafka-python (registry.py) and @kafkajs/confluent-schema-registry
# (registry.js). With several bootstrap addresses (the runner's cluster
# part), or REGISTRY_INSTANCES=2, it runs two instances in one group and
# adds the checks of two instances and of a primary killed with SIGKILL.
# The security part has no registry features: it exits at once.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${SAMSA_BOOTSTRAP:?}" "${COMPAT_RESULTS:?}" "${SAMSA_BIN:?}"
export COMPAT_CACHE=${COMPAT_CACHE:-$HOME/.cache/samsa-compat}
if [ "${COMPAT_PART:-}" = security ]; then
  echo "registry: no security part (TLS and basic auth on the listener are checked by the Go tests)"
  exit 0
fi

# Python: a virtualenv of the pinned requirements under $COMPAT_CACHE.
venv=$COMPAT_CACHE/registry-python-venv
req=$here/requirements.txt
want=$(sha256sum "$req" | cut -d' ' -f1)
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.requirements.sha256" 2>/dev/null)" != "$want" ]; then
  echo "registry: installing $(grep -c '==' "$req") pinned Python packages into $venv"
  rm -rf "$venv"
  python3 -m venv "$venv" &&
    PIP_CACHE_DIR=$COMPAT_CACHE/pip "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$req" || exit 1
  echo "$want" >"$venv/.requirements.sha256"
fi
# Node: npm ci of the lock, skipped when node_modules matches it.
mkdir -p "$COMPAT_CACHE/npm"
if ! cmp -s "$here/package-lock.json" "$here/node_modules/.samsa-compat-lock"; then
  (cd "$here" && npm ci --cache "$COMPAT_CACHE/npm" --prefer-offline --no-audit --no-fund --loglevel=error) || exit 1
  cp "$here/package-lock.json" "$here/node_modules/.samsa-compat-lock"
fi

work=$(mktemp -d)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do
    for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  done
  rm -rf "$work"
}
trap cleanup EXIT

# start_registry NAME: `samsa registry` on a free loopback port (the
# kernel picks it), logging to $work/NAME.log; sets REG_URL and REG_PID
# once it serves (it has then read the store and knows a primary).
start_registry() {
  local log=$work/$1.log url=""
  "$SAMSA_BIN" registry --bootstrap-server "$SAMSA_BOOTSTRAP" --listener 127.0.0.1:0 \
    --group "compat-registry" >"$log" 2>&1 &
  REG_PID=$!
  # Not a job of this shell: the SIGKILL registry.py sends is expected,
  # and bash would report it ("Killed") when it reaps the job.
  disown "$REG_PID"
  pids+=("$REG_PID")
  for _ in $(seq 600); do
    url=$(sed -n 's|^schema registry serving on \(http://[0-9.:]*\).*|\1|p' "$log" | head -n1)
    [ -n "$url" ] && break
    kill -0 "$REG_PID" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$url" ]; then
    echo "registry: samsa registry ($1) did not start:" >&2
    cat "$log" >&2
    return 1
  fi
  REG_URL=$url
}

instances=${REGISTRY_INSTANCES:-1}
[[ $SAMSA_BOOTSTRAP == *,* ]] && instances=${REGISTRY_INSTANCES:-2}
fail=0
if [ "$instances" = 1 ] && [ -n "${SAMSA_REGISTRY_URL:-}" ]; then
  # One broker: the registry samsa serve runs itself (start_samsa in
  # lib.sh turns it on); its store is that broker.
  url_a=$SAMSA_REGISTRY_URL
else
  start_registry a || exit 1
  url_a=$REG_URL pid_a=$REG_PID
fi
if [ "$instances" = 1 ]; then
  SR_URL=$url_a "$venv/bin/python" "$here/registry.py" single || fail=1
  SR_URL=$url_a node "$here/registry.js" || fail=1
else
  # A is alone when it starts, so it is the primary; B joins and the
  # election keeps A.
  grep -q "schema registry primary.*primary=$url_a self=true" "$work/a.log" ||
    { echo "registry: instance A is not the primary:" >&2; cat "$work/a.log" >&2; exit 1; }
  start_registry b || exit 1
  url_b=$REG_URL
  grep -q "schema registry primary.*primary=$url_a " "$work/b.log" ||
    { echo "registry: instance B does not follow A:" >&2; cat "$work/b.log" >&2; exit 1; }
  # KafkaJS through the secondary (its writes forwarded), Python through
  # the primary, then the two-instance checks, which kill A.
  SR_URL=$url_b node "$here/registry.js" || fail=1
  SR_URL=$url_a SR_URL2=$url_b SR_PRIMARY_PID=$pid_a "$venv/bin/python" "$here/registry.py" cluster || fail=1
fi
if [ $fail = 1 ]; then
  for log in "$work"/*.log; do echo "-- $(basename "$log") tail:"; tail -n 15 "$log"; done
fi
exit $fail
