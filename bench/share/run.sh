#!/usr/bin/env bash
# The share-group benchmark of issue 21 (docs/PERFORMANCE.md#share-groups):
# delivery throughput of a share group (KIP-932) with 1, 4 and 16 franz-go
# share consumers on one partition, Samsa against Apache Kafka 4.4 (a
# single KRaft node from bench/compare's Maven Central jars, share groups
# on by default at its metadata version), side by side on this machine:
# records/s, duplicates, the broker's CPU per million records and its RSS,
# medians of RUNS runs and the Samsa/Kafka ratios (the driver is
# bench/share/driver). By hand only; not part of make test.
#
#   RECORDS (500000: the backlog), VALUE_BYTES (100), CONSUMERS (1,4,16), RUNS (3),
#   BROKERS (samsa,kafka), WARMUP (50000: an unrecorded one-consumer trial per fresh broker),
#   START (config: the backlog first, then share.auto.offset.reset=earliest on the group;
#     prime (Samsa only): a consumer joins the empty topic and leaves first, the group then
#     starts at 0 with the default "latest"; live: the consumers join first, the backlog is produced while they consume),
#   FALLBACK (live: with START=config, a broker that refuses the group config is measured live;
#     prime; never: fail),
#   OUT (a new directory under ${TMPDIR:-/tmp}): logs, results.json, results.md; kept
#   SAMSA_BIN (default: make build's bin/samsa), JAVA (java), KAFKA_HEAP (1G),
#   KAFKA_PROPS (extra Kafka server properties, key=value,...),
#   KAFKA_VERSION (4.4.0), SAMSA_BENCH_CACHE (~/.cache/samsa-bench: Kafka's jars)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-tags=pebblegozstd"

out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/bench-share.XXXXXX")}
brokers=${BROKERS:-samsa,kafka}

samsa=${SAMSA_BIN:-}
if [ -z "$samsa" ]; then
  make -s build
  samsa=bin/samsa
fi
go build -o bin/bench-share ./bench/share/driver
args=()
if [[ $brokers == *kafka* ]]; then
  args+=(-kafka-libs "$(bench/internal/kafka-libs.sh)" -java "${JAVA:-java}" -kafka-heap "${KAFKA_HEAP:-1G}")
  [ -n "${KAFKA_PROPS:-}" ] && args+=(-kafka-props "$KAFKA_PROPS")
fi
echo "== bench-share: logs and results in $out (load average: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
bin/bench-share -samsa "$samsa" -out "$out" -brokers "$brokers" \
  -records "${RECORDS:-500000}" -value-bytes "${VALUE_BYTES:-100}" -consumers "${CONSUMERS:-1,4,16}" \
  -runs "${RUNS:-3}" -warmup "${WARMUP:-50000}" -start "${START:-config}" -fallback "${FALLBACK:-live}" \
  -log4j bench/compare/kafka/log4j2.properties "${args[@]}"
echo "== done (load average: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
