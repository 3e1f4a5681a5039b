#!/usr/bin/env bash
# Runs every compatibility suite (or those named as arguments) against a
# fresh Samsa broker each, then again against a fresh cluster of
# COMPAT_CLUSTER broker processes each (3; 0 skips it), then its security
# part against a fresh secured broker each (COMPAT_SECURITY=0 skips it),
# then writes docs/COMPATIBILITY.md from the results. With the registry
# suite, that suite also runs with Apache Kafka as the store
# (COMPAT_REGISTRY_KAFKA=0 skips it). See
# test/compat/README.md.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
. test/compat/lib.sh

make -s build || exit 1
export SAMSA_BIN=$root/bin/samsa
export COMPAT_CACHE=${COMPAT_CACHE:-$HOME/.cache/samsa-compat}
mkdir -p "$COMPAT_CACHE"
work=$(mktemp -d)
trap 'stop_samsa; stop_cluster; rm -rf "$work"' EXIT
export COMPAT_RESULTS=$work/results.jsonl
: >"$COMPAT_RESULTS"

suites=("$@")
if [ ${#suites[@]} -eq 0 ]; then
  for d in test/compat/*/; do
    [ -x "$d/run.sh" ] && suites+=("$(basename "$d")")
  done
fi

failed=()
for s in "${suites[@]}"; do
  echo "== compat: $s"
  start=$(date +%s)
  start_samsa "$work/$s" "$s" || { failed+=("$s"); continue; }
  if ! "test/compat/$s/run.sh"; then
    failed+=("$s")
    echo "-- broker log tail ($s):"; tail -n 20 "$work/$s/broker.log"
  fi
  stop_samsa
  echo "== compat: $s took $(( $(date +%s) - start ))s"
done

single=$COMPAT_RESULTS
nodes=${COMPAT_CLUSTER:-3}
cluster_args=()
if [ "$nodes" -gt 0 ]; then
  export COMPAT_RESULTS=$work/results-cluster.jsonl
  : >"$COMPAT_RESULTS"
  for s in "${suites[@]}"; do
    echo "== compat: $s against $nodes brokers"
    start=$(date +%s)
    start_cluster "$work/$s-cluster" "$nodes" || { failed+=("$s@cluster"); continue; }
    if ! "test/compat/$s/run.sh"; then
      failed+=("$s@cluster")
      for log in "$work/$s-cluster"/nodes/node-*/node.log; do
        echo "-- $log tail ($s):"; tail -n 20 "$log"
      done
    fi
    stop_cluster
    echo "== compat: $s against $nodes brokers took $(( $(date +%s) - start ))s"
  done
  cp "$COMPAT_RESULTS" test/compat/last-results-cluster.jsonl
  cluster_args=(-cluster-in "$COMPAT_RESULTS" -cluster-nodes "$nodes")
fi

# The registry suite once more with Apache Kafka as the store (about 30 s
# once bench/compare's Kafka jars are cached): COMPAT_REGISTRY_KAFKA=0
# skips it, as does a machine without Java.
registry_kafka_args=()
if [[ " ${suites[*]} " == *" registry "* ]] && [ "${COMPAT_REGISTRY_KAFKA:-1}" != 0 ] && command -v "${JAVA:-java}" >/dev/null; then
  echo "== compat: registry with Apache Kafka as the store"
  start=$(date +%s)
  export COMPAT_RESULTS=$work/results-registry-kafka.jsonl
  : >"$COMPAT_RESULTS"
  test/compat/registry/on-kafka.sh || failed+=("registry@kafka")
  echo "== compat: registry with Apache Kafka as the store took $(( $(date +%s) - start ))s"
  cp "$COMPAT_RESULTS" test/compat/last-results-registry-kafka.jsonl
  registry_kafka_args=(-registry-kafka-in "$COMPAT_RESULTS")
fi

# The security part: each suite runs only its security features
# (COMPAT_PART=security), against a broker with every secured listener.
security_args=()
if [ "${COMPAT_SECURITY:-1}" != 0 ]; then
  export COMPAT_RESULTS=$work/results-security.jsonl COMPAT_PART=security
  : >"$COMPAT_RESULTS"
  part_start=$(date +%s)
  for s in "${suites[@]}"; do
    echo "== compat: $s, security part"
    start=$(date +%s)
    if ! start_secure_samsa "$work/$s-security"; then
      failed+=("$s@security"); stop_samsa; continue
    fi
    if ! "test/compat/$s/run.sh"; then
      failed+=("$s@security")
      echo "-- broker log tail ($s, security part):"; tail -n 20 "$work/$s-security/broker.log"
    fi
    stop_samsa
    echo "== compat: $s, security part took $(( $(date +%s) - start ))s"
  done
  echo "== compat: the security part took $(( $(date +%s) - part_start ))s"
  unset COMPAT_PART
  cp "$COMPAT_RESULTS" test/compat/last-results-security.jsonl
  security_args=(-security-in "$COMPAT_RESULTS")
fi

cp "$single" test/compat/last-results.jsonl
go run ./test/compat/report -in "$single" "${cluster_args[@]}" "${security_args[@]}" "${registry_kafka_args[@]}" -out docs/COMPATIBILITY.md || failed+=("report")
if [ ${#failed[@]} -gt 0 ]; then
  echo "compat: failed: ${failed[*]}"
  exit 1
fi
echo "compat: all suites passed"
