#!/usr/bin/env bash
# The Schema Registry suite with Apache Kafka as the store (`make
# registry-on-kafka`): a single Kafka node (KRaft, broker and controller in
# one JVM) on free loopback ports, from the jars bench/compare fetches from
# Maven Central into its cache, then run.sh with two registry instances
# against it (REGISTRY_INSTANCES=2: every client check, the two-instance
# checks and the primary killed). Prints the results; exits non-zero when
# any failed.
#
# Environment: KAFKA_VERSION (4.4.0), SAMSA_BENCH_CACHE (~/.cache/samsa-bench),
# JAVA (java), COMPAT_CACHE (~/.cache/samsa-compat), KAFKA_ONLY (1: start
# Kafka, print its address and serve until interrupted; no suite).
set -uo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$root"
# Run from test/compat/run.sh, it gets the runner's binary and results
# file; by hand, it builds and keeps its results to itself.
if [ -z "${SAMSA_BIN:-}" ]; then
  make -s build || exit 1
  export SAMSA_BIN=$root/bin/samsa
fi
export COMPAT_CACHE=${COMPAT_CACHE:-$HOME/.cache/samsa-compat}
cache=${SAMSA_BENCH_CACHE:-$HOME/.cache/samsa-bench}
version=${KAFKA_VERSION:-4.4.0}
java=${JAVA:-java}
libs=$cache/kafka-libs-$version
start=$(date +%s)

# The same download as bench/compare/run.sh: kafka_2.13 and its runtime
# dependencies with Maven, once.
if [ ! -f "$libs/kafka_2.13-$version.jar" ]; then
  echo "== fetch Apache Kafka $version from Maven Central into $libs"
  mkdir -p "$cache"
  rm -rf "$libs.tmp"
  (cd bench/compare/kafka && mvn -q -B -Dmaven.repo.local="$cache/m2" -Dkafka.version="$version" \
    dependency:copy-dependencies -DoutputDirectory="$libs.tmp") || exit 1
  mv "$libs.tmp" "$libs"
fi

work=$(mktemp -d)
kafka_pid=
trap '[ -n "$kafka_pid" ] && { kill "$kafka_pid"; wait "$kafka_pid"; } 2>/dev/null; rm -rf "$work"' EXIT

# free_port: a port the kernel hands out for 127.0.0.1:0, released again;
# Kafka binds it a moment later, so a start that finds it taken is retried.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_kafka: a single combined node in $work/kafka; sets kafka_pid and
# addr once it answers Metadata. The properties are bench/compare's
# single node (driver/brokers.go): Samsa's single-node replication factors.
start_kafka() {
  local dir=$work/kafka port ctrl
  rm -rf "$dir"; mkdir -p "$dir"
  port=$(free_port) ctrl=$(free_port)
  addr=127.0.0.1:$port
  cat >"$dir/server.properties" <<EOF
process.roles=broker,controller
node.id=1
listeners=PLAINTEXT://$addr,CONTROLLER://127.0.0.1:$ctrl
advertised.listeners=PLAINTEXT://$addr,CONTROLLER://127.0.0.1:$ctrl
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
controller.quorum.bootstrap.servers=127.0.0.1:$ctrl
log.dirs=$dir/data
num.partitions=1
group.initial.rebalance.delay.ms=0
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
EOF
  local log4j=-Dlog4j2.configurationFile=$root/bench/compare/kafka/log4j2.properties
  local id
  id=$("$java" "$log4j" -cp "$libs/*" kafka.tools.StorageTool random-uuid 2>/dev/null | tail -n1)
  "$java" "$log4j" -cp "$libs/*" kafka.tools.StorageTool format --standalone -t "$id" \
    -c "$dir/server.properties" >"$dir/format.log" 2>&1 || { cat "$dir/format.log"; return 1; }
  "$java" -Xmx512m -Xms512m -XX:+UseG1GC "$log4j" -Dkafka.logs.dir="$dir" -cp "$libs/*" \
    kafka.Kafka "$dir/server.properties" >"$dir/kafka.log" 2>&1 &
  kafka_pid=$!
  for _ in $(seq 600); do
    "$SAMSA_BIN" topic list --bootstrap-server "$addr" >/dev/null 2>&1 && return 0
    kill -0 "$kafka_pid" 2>/dev/null || break
    sleep 0.1
  done
  { kill "$kafka_pid"; wait "$kafka_pid"; } 2>/dev/null
  kafka_pid=
  echo "== Kafka did not start:" >&2
  tail -n 30 "$dir/kafka.log" >&2
  grep -q "Address already in use" "$dir/kafka.log" && return 2
  return 1
}

for try in 1 2 3; do
  start_kafka && break
  rc=$?
  [ $rc = 2 ] && [ $try -lt 3 ] && continue
  exit 1
done
echo "== Apache Kafka $version serving on $addr ($(( $(date +%s) - start ))s since the start)"

# KAFKA_ONLY=1: serve until interrupted, for running other things against
# it (the registry's benchmarks with SR_BENCH_BOOTSTRAP).
if [ "${KAFKA_ONLY:-0}" = 1 ]; then
  wait "$kafka_pid"
  exit 0
fi

export COMPAT_RESULTS=${COMPAT_RESULTS:-$work/results.jsonl} SAMSA_BOOTSTRAP=$addr REGISTRY_INSTANCES=2
before=$(wc -l <"$COMPAT_RESULTS" 2>/dev/null || echo 0)
test/compat/registry/run.sh
rc=$?
mine=$(tail -n +"$((before + 1))" "$COMPAT_RESULTS")
echo "== registry on Apache Kafka $version: $(grep -c '"result": *"pass"' <<<"$mine") passed, $(grep -c '"result": *"fail"' <<<"$mine") failed; took $(( $(date +%s) - start ))s in all"
if [ $rc != 0 ]; then
  echo "-- Kafka log tail:"; tail -n 20 "$work/kafka/kafka.log"
fi
exit $rc
