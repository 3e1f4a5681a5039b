#!/usr/bin/env bash
# kcat (librdkafka) against a real Samsa broker on a free loopback port:
# produce with keys, headers and each codec, consume back, compare, and
# list metadata. Usage: test/kcat.sh path/to/samsa
set -euo pipefail
samsa=${1:?usage: kcat.sh SAMSA_BINARY}
work=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -rf "$work"' EXIT

"$samsa" serve --listeners PLAINTEXT://127.0.0.1:0 --log.dirs "$work/data" \
  --override log.cleaner.backoff.ms=100 --override samsa.http.listener= --override samsa.schema.registry.listener= --override samsa.rest.listener= >"$work/broker.log" 2>&1 &
pid=$!
addr=""
for _ in $(seq 100); do
  addr=$(grep -o 'listeners="PLAINTEXT://[0-9.:]*' "$work/broker.log" | head -n1 | sed 's|listeners="PLAINTEXT://||') || true
  [ -n "$addr" ] && break
  sleep 0.1
done
[ -n "$addr" ] || { echo "kcat: broker did not start"; cat "$work/broker.log"; exit 1; }
echo "kcat: broker at $addr"

pass=0 fail=0
check() { # name, expected file, actual file
  if diff -u "$2" "$3" >"$work/diff"; then pass=$((pass+1)); echo "ok   $1"
  else fail=$((fail+1)); echo "FAIL $1"; cat "$work/diff"; fi
}

for codec in none gzip snappy lz4 zstd; do
  topic="kcat-$codec"
  : >"$work/want"
  for i in $(seq 1 50); do echo "key$i:value $i for $codec" >>"$work/want"; done
  kcat -b "$addr" -P -t "$topic" -K: -z "$codec" -H "codec=$codec" -H "empty=" -X topic.request.required.acks=-1 <"$work/want"
  kcat -b "$addr" -C -t "$topic" -o beginning -e -q -f '%k:%s\n' >"$work/got"
  check "produce/consume $codec" "$work/want" "$work/got"
  kcat -b "$addr" -C -t "$topic" -o beginning -c 1 -e -q -f '%h\n' >"$work/headers"
  printf 'codec=%s,empty=\n' "$codec" >"$work/want-headers"
  check "headers $codec" "$work/want-headers" "$work/headers"
done

# Offsets: consume from offset 45 of the last topic.
kcat -b "$addr" -C -t kcat-zstd -o 45 -e -q -f '%o\n' >"$work/got"
printf '45\n46\n47\n48\n49\n' >"$work/want"
check "consume from offset" "$work/want" "$work/got"

# Metadata lists the topics.
kcat -b "$addr" -L -J >"$work/meta.json"
for codec in none gzip snappy lz4 zstd; do
  if grep -q "\"topic\":\"kcat-$codec\"" "$work/meta.json"; then pass=$((pass+1)); echo "ok   metadata kcat-$codec"
  else fail=$((fail+1)); echo "FAIL metadata kcat-$codec"; cat "$work/meta.json"; fi
done

# Compaction: duplicate keys and a tombstone, one kcat run per round so each
# round lands in a segment of its own (segment.ms=1 rolls on the next,
# later batch), a fence key keeping the last round out of the active
# segment. delete.retention.ms=0 lets the tombstone go in the same pass.
topic=kcat-compacted
"$samsa" --bootstrap-server "$addr" topic create "$topic" --partitions 1 \
  --config cleanup.policy=compact --config segment.ms=1 \
  --config min.cleanable.dirty.ratio=0.01 --config delete.retention.ms=0 >/dev/null
for round in 'k1:a1
k2:a1
k3:a1' 'k1:a2
k2:a2
k3:a2' 'k1:a3
k2:' 'fence:f'; do
  printf '%s\n' "$round" | kcat -b "$addr" -P -t "$topic" -K: -Z -X topic.request.required.acks=-1
done
# Written: k1 0,3,6  k2 1,4,7(null)  k3 2,5  fence 8. Cleaned: k3 5, k1 6, fence 8.
printf '5 k3 a2\n6 k1 a3\n8 fence f\n' >"$work/want"
for _ in $(seq 100); do
  kcat -b "$addr" -C -t "$topic" -o beginning -e -q -f '%o %k %s\n' >"$work/got"
  [ "$(wc -l <"$work/got")" -le 3 ] && break
  sleep 0.2
done
check "compacted view" "$work/want" "$work/got"

echo "kcat: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
