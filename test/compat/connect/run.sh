#!/usr/bin/env bash
# Connect suite (README.md here): Apache Kafka's distributed Connect
# worker (java-worker.sh: connect-runtime, connect-file, connect-json from
# Maven Central) against $SAMSA_BOOTSTRAP, driven through its REST API by
# test/connectdiff's sequence (FileStream connectors created, paused,
# stopped, restarted, their offsets altered and reset, plugins, loggers)
# with its answers checked against the recorded ones; then Samsa's worker
# (`samsa connect`) through the same sequence, compared with the Java
# worker's answers. Appends its result lines to $COMPAT_RESULTS.
#
#   SAMSA_BOOTSTRAP, COMPAT_RESULTS, COMPAT_CACHE: the runner's
#
# The security part runs no check: the Connect REST API's TLS and basic
# auth are not built yet.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
: "${SAMSA_BOOTSTRAP:?}" "${COMPAT_RESULTS:?}"
export COMPAT_CACHE=${COMPAT_CACHE:-$HOME/.cache/samsa-compat}
version=${KAFKA_VERSION:-4.3.0}
if [ "${COMPAT_PART:-}" = security ]; then
  echo "connect: no security part (the worker's REST listener has no TLS or basic auth yet)"
  exit 0
fi

# result FEATURE PASS|FAIL|SKIP LOG: one result line, the log's tail as
# the detail of a failure.
result() {
  local detail=""
  [ "$2" = fail ] && detail=$(grep -E -- '--- FAIL|differs|Error|error' "$3" | head -n 20)
  python3 - "$COMPAT_RESULTS" "$version" "$1" "$2" "$detail" <<'PY'
import json, sys
path, version, feature, result, detail = sys.argv[1:]
with open(path, "a") as f:
    f.write(json.dumps({"client": "kafka-connect", "version": version, "feature": feature, "result": result, "detail": detail}) + "\n")
PY
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
cd "$root"
FETCH_ONLY=1 "$here/java-worker.sh" || exit 1
for t in TestJavaWorker:connect-java-worker TestSamsaWorker:connect-rest-vs-java; do
  name=${t%%:*} feature=${t#*:}
  CONNECTDIFF_BOOTSTRAP=$SAMSA_BOOTSTRAP go test ./test/connectdiff/ -run "^$name\$" -count=1 -v >"$work/$name.log" 2>&1
  rc=$?
  if grep -q -- "--- SKIP: $name" "$work/$name.log"; then
    echo "connect: $name skipped: $(grep -B1 -- "--- SKIP" "$work/$name.log" | head -n1 | sed "s/^ *//")"
  elif [ $rc = 0 ]; then
    result "$feature" pass "$work/$name.log"
  else
    result "$feature" fail "$work/$name.log"
    tail -n 40 "$work/$name.log"
    fail=1
  fi
done
exit $fail
