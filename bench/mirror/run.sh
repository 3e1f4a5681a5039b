#!/usr/bin/env bash
# The mirroring benchmark of issue 20 (docs/PERFORMANCE.md#mirroring):
# Samsa's `samsa mirror` (translate, exactly once, offset preserving) against
# Apache Kafka's MirrorMaker 2 (connect-mirror 4.3.0 from Maven Central, the
# jars test/kafkaref uses, dedicated mode, its defaults) with the same
# mm2.properties, between two Samsa brokers on free loopback ports: backlog
# records/s, end-to-end lag under a steady load, the mirror's CPU per
# million records and its RSS, medians of RUNS runs and the Samsa/MM2
# ratios (the driver is bench/mirror/driver). By hand only; not part of
# make test.
#
#   RECORDS (1000000: the backlog on A), PARTITIONS (4), VALUE_BYTES (100), RUNS (3),
#   MODES (translate,eos,preserve,mm2), RATE (20000: records/s of the lag phase), LIVE (20s),
#   SETTLE (5s: the pause between the backlog and the lag phase),
#   TASKS_MAX (4), LAG_LOG=1 (each run writes OUT/<mode>-<run>/lags.csv: produce time, lag), OUT (a new directory under ${TMPDIR:-/tmp}): logs, results.json, results.md; kept
#   JAVA, JAVA_OPTS (MirrorMaker 2's; default connect-mirror-maker.sh's), KAFKAREF_MIRROR_VERSION (4.3.0),
#   COMPAT_CACHE (~/.cache/samsa-compat: MirrorMaker 2's jars, shared with test/kafkaref)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-tags=pebblegozstd"

cache=${COMPAT_CACHE:-$HOME/.cache/samsa-compat}
version=${KAFKAREF_MIRROR_VERSION:-4.3.0}
out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/bench-mirror.XXXXXX")}
modes=${MODES:-translate,eos,preserve,mm2}

make -s build
go build -o bin/bench-mirror ./bench/mirror/driver
args=()
if [[ $modes == *mm2* ]]; then
  libs=$cache/mirror-libs-$version
  # The same directory test/kafkaref fills (libs.go: copy into a temporary
  # directory, rename into place once the marker jar is there).
  if [ ! -f "$libs/connect-mirror-$version.jar" ]; then
    echo "== fetch MirrorMaker 2 $version into $libs" >&2
    tmp=$libs.tmp-run-$$
    rm -rf "$tmp"
    (cd test/kafkaref && mvn -q -B -Dmaven.repo.local="$cache/m2" -Dmirror.version="$version" \
      dependency:copy-dependencies -DoutputDirectory="$tmp") >&2
    rm -rf "$libs"
    mv "$tmp" "$libs"
  fi
  args+=(-libs "$libs" -java "${JAVA:-java}")
  [ -n "${JAVA_OPTS:-}" ] && args+=(-java-opts "$JAVA_OPTS")
fi
[ "${LAG_LOG:-0}" = 1 ] && args+=(-lag-log)
echo "== bench-mirror: logs and results in $out" >&2
bin/bench-mirror -samsa bin/samsa -out "$out" -modes "$modes" \
  -records "${RECORDS:-1000000}" -partitions "${PARTITIONS:-4}" -value-bytes "${VALUE_BYTES:-100}" \
  -runs "${RUNS:-3}" -rate "${RATE:-20000}" -live "${LIVE:-20s}" -settle "${SETTLE:-5s}" -tasks-max "${TASKS_MAX:-4}" \
  -log4j test/kafkaref/log4j2.properties "${args[@]}"
