#!/usr/bin/env bash
# The Connect benchmark of issue 18 (docs/PERFORMANCE.md#connect):
# FileStreamSource → Samsa → FileStreamSink, Samsa's worker (`samsa connect
# --standalone`) against Apache Kafka's ConnectStandalone (the jars of
# test/compat/connect/pom.xml, Kafka 4.3.0) on one Samsa broker on a free
# loopback port; records/s end to end and source only, the worker's peak
# and mean RSS and CPU time per record, medians of RUNS runs and the
# Samsa/Java ratio (the driver is bench/connect/driver). By hand only; not
# part of make test.
#
#   LINES (1000000), LINE_BYTES (100), RUNS (3), BATCH_SIZE (2000: FileStreamSource's batch.size),
#   FLUSH_MS (1000: offset.flush.interval.ms), RUNTIMES (samsa,java),
#   COMPRESSION (none: the producers' compression.type, Kafka's default; empty for each runtime's own)
#   OUT (a new directory under ${TMPDIR:-/tmp}): input, logs, results.json; kept
#   CPUPROFILE=1 writes a CPU profile of each samsa connect run (OUT/bench-samsa-R/cpu.pprof)
#   JAVA, JAVA_OPTS (connect-standalone.sh's), KAFKA_VERSION, COMPAT_CACHE: as java-worker.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
# pebble (streams/state) uses the pure-Go zstd, as the Makefile's TAGS.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-tags=pebblegozstd"

cache=${COMPAT_CACHE:-$HOME/.cache/samsa-compat}
version=${KAFKA_VERSION:-4.3.0}
out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/bench-connect.XXXXXX")}

make -s build
go build -o bin/bench-connect ./bench/connect/driver
runtimes=${RUNTIMES:-samsa,java}
args=()
if [[ $runtimes == *java* ]]; then
  COMPAT_CACHE=$cache KAFKA_VERSION=$version FETCH_ONLY=1 test/compat/connect/java-worker.sh
  args+=(-libs "$cache/connect-libs-$version" -java "${JAVA:-java}")
  [ -n "${JAVA_OPTS:-}" ] && args+=(-java-opts "$JAVA_OPTS")
fi
[ "${CPUPROFILE:-0}" = 1 ] && args+=(-cpuprofile)
echo "== bench-connect: files and logs in $out" >&2
bin/bench-connect -samsa bin/samsa -out "$out" -runtimes "$runtimes" \
  -lines "${LINES:-1000000}" -line-bytes "${LINE_BYTES:-100}" -runs "${RUNS:-3}" \
  -batch-size "${BATCH_SIZE:-2000}" -offset-flush-ms "${FLUSH_MS:-1000}" -producer-compression "${COMPRESSION-none}" \
  -log4j test/compat/connect/log4j2.properties "${args[@]}"
