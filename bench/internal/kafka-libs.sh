#!/usr/bin/env bash
# Prints the directory of Apache Kafka's jars (kafka_2.13 and its runtime
# dependencies, bench/compare/kafka/pom.xml) for the benchmarks that run
# Kafka (bench/compare, bench/share), fetching them from Maven Central
# with Maven once, under the lock test/kafkaref takes on the same
# directory. Run from the repository's root.
#
# Environment: KAFKA_VERSION (4.4.0), SAMSA_BENCH_CACHE (~/.cache/samsa-bench).
set -euo pipefail
cache=${SAMSA_BENCH_CACHE:-$HOME/.cache/samsa-bench}
version=${KAFKA_VERSION:-4.4.0}
libs=$cache/kafka-libs-$version
mkdir -p "$cache"
exec 9>"$libs.lock"
flock 9
if [ ! -f "$libs/kafka_2.13-$version.jar" ]; then
  echo "== fetch Apache Kafka $version from Maven Central into $libs" >&2
  rm -rf "$libs.tmp"
  (cd bench/compare/kafka && mvn -q -B -Dmaven.repo.local="$cache/m2" -Dkafka.version="$version" \
    dependency:copy-dependencies -DoutputDirectory="$libs.tmp") >&2
  mv "$libs.tmp" "$libs"
fi
echo "$libs"
