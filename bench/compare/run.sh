#!/usr/bin/env bash
# Runs the same workloads against Apache Kafka, Samsa (page cache and
# --durable) and kfake (the client ceiling) on this machine, alternating
# brokers round by round, and writes results.jsonl, a markdown
# report and SVG charts to the output directory. See bench/compare/README.md.
# --cluster runs the cluster mode instead: three-node Samsa and Kafka
# clusters (RF 3, min ISR 2) and the single Samsa node (RF 1).
# --tls runs the TLS mode: Samsa and Kafka each with an SSL listener and in
# plaintext, side by side in every round (no kfake, no recovery phase).
#
#   bench/compare/run.sh [--quick] [--cluster | --tls] [--out DIR] [-- driver flags...]
#
# Environment: KAFKA_VERSION (default 4.4.0), SAMSA_BENCH_CACHE (default
# ~/.cache/samsa-bench), ROUNDS (default 3), JAVA (default java).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
# pebble (streams/state) uses the pure-Go zstd, as the Makefile's TAGS.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-tags=pebblegozstd"

quick=0
cluster=0
tls=0
out=""
while [ $# -gt 0 ]; do
  case $1 in
    --quick) quick=1; shift ;;
    --cluster) cluster=1; shift ;;
    --tls) tls=1; shift ;;
    --out) out=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "usage: $0 [--quick] [--cluster | --tls] [--out DIR] [-- driver flags...]" >&2; exit 2 ;;
  esac
done
if [ $cluster = 1 ] && [ $tls = 1 ]; then
  echo "--cluster and --tls: choose one" >&2
  exit 2
fi
suffix=""
[ $cluster = 1 ] && suffix=-cluster
[ $tls = 1 ] && suffix=-tls
[ $quick = 1 ] && suffix=$suffix-quick
out=${out:-bench/compare/out-$(date -u +%Y-%m-%d)$suffix}
if [ -e "$out/results.jsonl" ] && [[ " $* " != *" -first-round "* ]]; then
  echo "$out/results.jsonl exists: remove it, choose --out, or add rounds with -- -first-round N" >&2
  exit 2
fi
cache=${SAMSA_BENCH_CACHE:-$HOME/.cache/samsa-bench}
kafka_version=${KAFKA_VERSION:-4.4.0}
java=${JAVA:-java}
mkdir -p "$cache" "$out"

echo "== build bin/samsa"
go build -o bin/samsa ./cmd/samsa
go build -o "$cache/compare-driver" ./bench/compare/driver
go build -o "$cache/kfakeserver" ./test/kfakeserver

libs=$(KAFKA_VERSION=$kafka_version SAMSA_BENCH_CACHE=$cache bench/internal/kafka-libs.sh)

args=(-samsa bin/samsa -kfake "$cache/kfakeserver" -java "$java" -kafka-libs "$libs" -out "$out"
      -samsa-version "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
      -rounds "${ROUNDS:-3}")
if [ $quick = 1 ]; then
  args+=(-rounds 1 -records 100000 -e2e-records 20000 -recovery-bytes $((100 << 20)))
fi
if [ $cluster = 1 ]; then
  args+=(-cluster)
fi
if [ $tls = 1 ]; then
  args+=(-tls)
fi

echo "== run (load average: $(cut -d' ' -f1-3 /proc/loadavg)); results in $out/results.jsonl"
start=$(date +%s)
"$cache/compare-driver" "${args[@]}" "$@"
echo "== run took $(( $(date +%s) - start ))s (load average: $(cut -d' ' -f1-3 /proc/loadavg))"

go run ./bench/compare/report -in "$out/results.jsonl" -out "$out"
echo "== report: $out/README.md"
