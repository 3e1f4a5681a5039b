#!/usr/bin/env bash
# The web console's large-data benchmark of issue 22
# (docs/PERFORMANCE.md#console): a topic of 10,000,000 records in 1,000
# partitions and 10,000 partitions in the cluster; every console page
# requested over HTTP, median and p90 of N timed requests against the
# 300 ms target, the bytes of each answer, the Kafka requests each page
# makes and the records a message-browser page reads (the driver is
# bench/console/driver). By hand only; not part of make test.
#
#   RECORDS (10000000), PARTITIONS (1000: the big topic's),
#   CLUSTER_PARTITIONS (10000), TOPIC_PARTITIONS (6: each other topic's),
#   NODES (3: a node keeps 3 files open per partition, and this machine's
#     open-files limit is 20,000), PRODUCERS (4), N (20), WARMUP (2),
#   CONSOLE (auto: the serve's own console when the binary has
#     samsa.console.listener, else internal/console in the driver),
#   DATA (a directory kept between runs: a data set loaded there is measured
#     again without loading; default: a new one in OUT),
#   OUT (a new directory under ${TMPDIR:-/tmp}): logs, results.json, results.md,
#   ONLY (measure only the pages whose name contains it),
#   SAMSA_BIN (default: make build's bin/samsa)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-tags=pebblegozstd"

out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/bench-console.XXXXXX")}
samsa=${SAMSA_BIN:-}
build="a binary given by SAMSA_BIN"
if [ -z "$samsa" ]; then
  make -s build
  samsa=bin/samsa
  build=$(git rev-parse --short HEAD)
  git diff --quiet HEAD || build="$build (with uncommitted changes)"
fi
go build -o bin/bench-console ./bench/console/driver
args=()
[ -n "${DATA:-}" ] && args+=(-data "$DATA")
[ -n "${ONLY:-}" ] && args+=(-only "$ONLY")
echo "== bench-console: logs and results in $out (load average: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
bin/bench-console -samsa "$samsa" -build "$build" -out "$out" -console "${CONSOLE:-auto}" -nodes "${NODES:-3}" \
  -records "${RECORDS:-10000000}" -partitions "${PARTITIONS:-1000}" \
  -cluster-partitions "${CLUSTER_PARTITIONS:-10000}" -topic-partitions "${TOPIC_PARTITIONS:-6}" \
  -producers "${PRODUCERS:-4}" -n "${N:-20}" -warmup "${WARMUP:-2}" "${args[@]}"
echo "== done (load average: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
