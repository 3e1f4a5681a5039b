#!/usr/bin/env bash
# The streams benchmark of issue 19 (docs/PERFORMANCE.md#streams): word
# count and a windowed count on Kafka Streams (bench/streams/java, built
# with Maven against kafka-streams from Maven Central) and on Samsa's
# streams library (SAMSA_APP: a program with Bench.java's command line),
# on one Samsa broker on a free loopback port; records/s from RUNNING until
# the input is committed, the application's peak and mean RSS and CPU time
# per record, medians of RUNS runs and the Samsa/Java ratio (the driver is
# bench/streams/driver). By hand only; not part of make test.
#
#   RECORDS (1000000), PARTITIONS (4), RUNS (3), TOPOLOGIES (wordcount,windowed),
#   RUNTIMES (samsa,java; java or samsa for one side), SAMSA_APP (the Samsa side's binary;
#   default: bench/streams/samsa-app built into bin/samsa-app),
#   COMMIT_MS (1000: commit.interval.ms), CACHE_BYTES (10485760: statestore.cache.max.bytes),
#   OUT (a new directory under ${TMPDIR:-/tmp}): logs, state, results.json; kept
#   CPUPROFILE (1: each Samsa run writes a CPU profile to $OUT/profiles/<application.id>.cpu.pprof)
#   JAVA, JAVA_OPTS, KAFKA_VERSION (4.4.0), COMPAT_CACHE (~/.cache/samsa-compat)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
here=$root/bench/streams/java
cache=${COMPAT_CACHE:-$HOME/.cache/samsa-compat}
version=${KAFKA_VERSION:-4.4.0}
out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/bench-streams.XXXXXX")}
build=$cache/bench-streams-$version
stamp=$(cat "$here/pom.xml" "$here"/src/main/java/io/samsa/benchstreams/*.java | sha256sum | cut -c1-16)

make -s build
go build -o bin/bench-streams ./bench/streams/driver
runtimes=${RUNTIMES:-samsa,java}
if [[ $runtimes == *samsa* && -z ${SAMSA_APP:-} ]]; then
  go build -tags "${TAGS:-pebblegozstd}" -o bin/samsa-app ./bench/streams/samsa-app
  SAMSA_APP=bin/samsa-app
fi
args=()
if [[ $runtimes == *java* ]]; then
  if [ "$(cat "$build/stamp" 2>/dev/null)" != "$stamp" ]; then
    echo "== build the Kafka Streams $version benchmark into $build" >&2
    rm -rf "$build"
    (cd "$here" && mvn -q -B -Dmaven.repo.local="$cache/m2" -Dkafka.version="$version" -Dbuild.dir="$build" \
      package dependency:copy-dependencies -DoutputDirectory="$build/libs") >&2
    echo "$stamp" >"$build/stamp"
  fi
  args+=(-classpath "$build/classes:$build/libs/*" -java "${JAVA:-java}")
  [ -n "${JAVA_OPTS:-}" ] && args+=(-java-opts "$JAVA_OPTS")
fi
[ -n "${SAMSA_APP:-}" ] && args+=(-samsa-app "$SAMSA_APP")
if [ "${CPUPROFILE:-}" = 1 ]; then
  mkdir -p "$out/profiles"
  export BENCH_STREAMS_PROFILE_DIR=$out/profiles
fi
echo "== bench-streams: logs and state in $out" >&2
bin/bench-streams -samsa bin/samsa -out "$out" -runtimes "$runtimes" -topologies "${TOPOLOGIES:-wordcount,windowed}" \
  -records "${RECORDS:-1000000}" -partitions "${PARTITIONS:-4}" -runs "${RUNS:-3}" \
  -commit-ms "${COMMIT_MS:-1000}" -cache-bytes "${CACHE_BYTES:-10485760}" \
  -log4j bench/streams/java/log4j2.properties "${args[@]}"
