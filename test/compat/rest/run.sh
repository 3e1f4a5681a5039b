#!/usr/bin/env bash
# REST Proxy suite (README.md here): starts `samsa rest` against
# $SAMSA_BOOTSTRAP on a free loopback port, makes its fixtures through
# the REST API (a topic of 3 partitions, a record in each) and a group
# with committed offsets (samsa consume --group), then runs every check here in
# turn: check_*.sh with bash, check_*.py with the suite's Python, each
# with the environment below and appending its result lines to
# $COMPAT_RESULTS. A new check is a new check_* file.
#
#   REST_URL         the proxy, http://127.0.0.1:PORT (no /v3)
#   SR_URL           the Schema Registry the proxy uses (samsa registry)
#   REST_CLUSTER_ID  the cluster's ID
#   REST_BROKERS     the broker IDs, comma-separated
#   REST_TOPIC       the fixture topic (3 partitions)
#   REST_GROUP       the fixture group (offsets committed, no member)
#   REST_WORK        a scratch directory of this run
#   REST_VENV        the Python virtualenv of requirements.txt
#   SAMSA_BOOTSTRAP, SAMSA_BIN, COMPAT_RESULTS, COMPAT_CACHE: the runner's
#
# The security part runs no check: the listener's TLS, basic auth and
# per-principal clients are checked by the Go tests.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${SAMSA_BOOTSTRAP:?}" "${COMPAT_RESULTS:?}" "${SAMSA_BIN:?}"
export COMPAT_CACHE=${COMPAT_CACHE:-$HOME/.cache/samsa-compat}
if [ "${COMPAT_PART:-}" = security ]; then
  echo "rest: no security part (the HTTP listener's TLS, basic auth and per-principal clients are checked by the Go tests: internal/restproxy/security_test.go, cmd/samsa/rest_test.go)"
  exit 0
fi

# Python: a virtualenv of the pinned requirements under $COMPAT_CACHE.
venv=$COMPAT_CACHE/rest-python-venv
req=$here/requirements.txt
want=$(sha256sum "$req" | cut -d' ' -f1)
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.requirements.sha256" 2>/dev/null)" != "$want" ]; then
  echo "rest: installing $(grep -c '==' "$req") pinned Python packages into $venv"
  rm -rf "$venv"
  python3 -m venv "$venv" &&
    PIP_CACHE_DIR=$COMPAT_CACHE/pip "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$req" || exit 1
  echo "$want" >"$venv/.requirements.sha256"
fi

work=$(mktemp -d)
rest_pid="" registry_pid=""
cleanup() {
  local p
  for p in $rest_pid $registry_pid; do
    kill "$p" 2>/dev/null
    for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  done
  rm -rf "$work"
}
trap cleanup EXIT

# samsa registry on a port the kernel picks, for the schema formats: the
# proxy's registry, which the checks' Kafka clients use too.
"$SAMSA_BIN" registry --bootstrap-server "$SAMSA_BOOTSTRAP" --listener 127.0.0.1:0 \
  --group compat-rest-registry >"$work/registry.log" 2>&1 &
registry_pid=$!
sr_url=""
for _ in $(seq 600); do
  sr_url=$(sed -n 's|^schema registry serving on \(http://[0-9.:]*\).*|\1|p' "$work/registry.log" | head -n1)
  [ -n "$sr_url" ] && break
  kill -0 "$registry_pid" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$sr_url" ]; then
  echo "rest: samsa registry did not start:" >&2
  cat "$work/registry.log" >&2
  exit 1
fi

# samsa rest on a port the kernel picks; its first line names the URL.
"$SAMSA_BIN" rest --bootstrap-server "$SAMSA_BOOTSTRAP" --listener 127.0.0.1:0 \
  --schema-registry-url "$sr_url" >"$work/rest.log" 2>&1 &
rest_pid=$!
url=""
for _ in $(seq 600); do
  url=$(sed -n 's|^rest proxy serving on \(http://[0-9.:]*\).*|\1|p' "$work/rest.log" | head -n1)
  [ -n "$url" ] && break
  kill -0 "$rest_pid" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$url" ]; then
  echo "rest: samsa rest did not start:" >&2
  cat "$work/rest.log" >&2
  exit 1
fi

# The cluster, its brokers and the fixture topic, through the API itself.
fixtures=$("$venv/bin/python" - "$url" <<'PY'
import json, sys, urllib.request
base = sys.argv[1] + "/v3/clusters"
def call(method, url, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read() or b"null")
cluster = call("GET", base)["data"][0]["cluster_id"]
brokers = sorted(b["broker_id"] for b in call("GET", f"{base}/{cluster}/brokers")["data"])
call("POST", f"{base}/{cluster}/topics", {"topic_name": "compat-rest-topic", "partitions_count": 3})
# On a cluster the broker the proxy asks may learn of the new topic a
# moment after CreateTopics answers (404 until then), as with Kafka.
import time, urllib.error
for p in range(3):
    for attempt in range(100):
        try:
            call("POST", f"{base}/{cluster}/topics/compat-rest-topic/records",
                 {"partition_id": p, "key": {"type": "STRING", "data": f"k{p}"}, "value": {"type": "STRING", "data": f"v{p}"}})
            break
        except urllib.error.HTTPError as e:
            if e.code != 404 or attempt == 99:
                raise
            time.sleep(0.1)
print(cluster, ",".join(map(str, brokers)))
PY
) || { echo "rest: fixtures failed" >&2; cat "$work/rest.log" >&2; exit 1; }
read -r cluster brokers <<<"$fixtures"
# A group with committed offsets (its lags), by samsa consume --group.
"$SAMSA_BIN" consume compat-rest-topic --bootstrap-server "$SAMSA_BOOTSTRAP" --group compat-rest-group \
  >"$work/consume.out" 2>&1 || { echo "rest: the group fixture failed:" >&2; cat "$work/consume.out" >&2; exit 1; }
export REST_URL=$url SR_URL=$sr_url REST_CLUSTER_ID=$cluster REST_BROKERS=$brokers REST_TOPIC=compat-rest-topic \
  REST_GROUP=compat-rest-group REST_WORK=$work REST_VENV=$venv
echo "rest: samsa rest at $url, cluster $cluster, brokers $brokers"

fail=0
for check in "$here"/check_*; do
  case $check in
  *.sh) bash "$check" || fail=1 ;;
  *.py) "$venv/bin/python" "$check" || fail=1 ;;
  esac
done
if [ $fail = 1 ]; then
  echo "-- samsa rest log tail:"; tail -n 30 "$work/rest.log"
fi
exit $fail
