#!/usr/bin/env bash
# samsa bench against Samsa and against franz-go's kfake, in one run on one
# machine with the same client: produce then consume 1M 100-byte records on
# 1 and 8 partitions, alternating the two servers each round. Prints a
# markdown table of medians (min-max) for docs/PERFORMANCE.md.
# Usage: test/compare-kfake.sh [rounds] [records]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
records=${2:-1000000}
work=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$work"' EXIT
go build -o "$work/samsa" ./cmd/samsa
go build -o "$work/kfakeserver" ./test/kfakeserver

start() { # target -> sets pid and addr
  case $1 in
  samsa)
    rm -rf "$work/data"
    "$work/samsa" serve --listeners PLAINTEXT://127.0.0.1:0 --log.dirs "$work/data" --override samsa.http.listener= --override samsa.schema.registry.listener= --override samsa.rest.listener= >"$work/server.log" 2>&1 &
    pid=$!
    pattern='listeners="PLAINTEXT://[0-9.:]*' strip='listeners="PLAINTEXT://' ;;
  kfake)
    "$work/kfakeserver" >"$work/server.log" 2>&1 &
    pid=$!
    pattern='listening [0-9.:]*' strip='listening ' ;;
  esac
  addr=""
  for _ in $(seq 100); do
    addr=$(grep -o "$pattern" "$work/server.log" | head -n1 | sed "s|$strip||") || true
    [ -n "$addr" ] && return 0
    sleep 0.1
  done
  echo "$1 did not start"; cat "$work/server.log"; exit 1
}

for round in $(seq "$rounds"); do
  for target in samsa kfake; do
    for parts in 1 8; do
      start $target
      topic="bench-$parts"
      for mode in produce consume; do
        extra=()
        [ $mode = produce ] && extra=(--record-size 100 --partitions "$parts")
        "$work/samsa" bench $mode --bootstrap-server "$addr" --records "$records" "${extra[@]}" \
          --topic "$topic" --broker-pid "$pid" --json \
          | sed "s/^{/{\"target\":\"$target\",\"partitions\":$parts,\"round\":$round,/" >>"$work/results.jsonl"
      done
      kill $pid; wait $pid 2>/dev/null || true; pid=""
    done
  done
done

python3 - "$work/results.jsonl" <<'PY'
import json, sys, statistics
rows = [json.loads(l) for l in open(sys.argv[1])]
def cell(vals, fmt):
    return f"{fmt(statistics.median(vals))} ({fmt(min(vals))}-{fmt(max(vals))})"
print("| workload | server | records/s | MB/s | broker CPU s / 1M records |")
print("|---|---|---|---|---|")
ratios = []
for mode in ("produce", "consume"):
    for parts in (1, 8):
        med = {}
        for target in ("samsa", "kfake"):
            rs = [r for r in rows if r["mode"] == mode and r["partitions"] == parts and r["target"] == target]
            rps = [r["records_per_s"] for r in rs]
            mbs = [r["mb_per_s"] for r in rs]
            cpu = [r["broker_cpu_s_per_million_records"] for r in rs]
            med[target] = (statistics.median(rps), statistics.median(cpu))
            print(f"| {mode} 1M x 100 B, {parts} partition{'s' if parts > 1 else ''} | {target} | "
                  f"{cell(rps, lambda v: f'{v/1000:.0f}K')} | {cell(mbs, lambda v: f'{v:.0f}')} | {cell(cpu, lambda v: f'{v:.2f}')} |")
        ratios.append((mode, parts, med["samsa"][0] / med["kfake"][0], med["samsa"][1] / med["kfake"][1] if med["kfake"][1] else float("nan")))
print()
print("| workload | Samsa/kfake records/s | Samsa/kfake broker CPU |")
print("|---|---|---|")
for mode, parts, r, c in ratios:
    print(f"| {mode}, {parts} partition{'s' if parts > 1 else ''} | {r:.2f} | {c:.2f} |")
PY
