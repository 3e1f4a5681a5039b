#!/usr/bin/env bash
# The Go clients' compatibility suite: franz-go, sarama, segmentio/kafka-go,
# confluent-kafka-go (librdkafka, hence cgo) and franz-go held to the Kafka
# 2.1 protocol. See test/compat/README.md.
set -euo pipefail
cd "$(dirname "$0")"
: "${SAMSA_BOOTSTRAP:?}" "${COMPAT_RESULTS:?}"
# Modules go to the ordinary Go module cache (outside the repo); the
# main module's go.sum does not cover this one, so its own go.sum pins
# every version.
export CGO_ENABLED=1
if [ "${COMPAT_PART:-}" != security ]; then
  exec go run . "$@"
fi
# The security part, then acl-matrix: the authorization matrix
# (internal/broker's TestAuthzMatrix, brokers of its own) with its
# librdkafka column, the rows only librdkafka expresses among them
# (authzprobe; see the README's Security).
. ../lib.sh
failed=0
go run . "$@" || failed=1
bin=$(mktemp -d)/authzprobe
logs=$(mktemp -d)
if ! go build -o "$bin" ./authzprobe >"$logs/build.log" 2>&1; then
  result confluent-kafka-go unknown acl-matrix fail "authzprobe did not build: $(tail -n 3 "$logs/build.log" | tr '\n' ' ')"
  exit 1
fi
version=$("$bin" -version)
echo "go: the ACL matrix with librdkafka"
root=$(cd ../../.. && pwd)
if (cd "$root" && SAMSA_AUTHZ_LIBRDKAFKA="$bin" timeout 900 go test ./internal/broker -run 'TestAuthzMatrix$' -count=1 -v) \
     >"$logs/acl-matrix.out" 2>&1; then
  result confluent-kafka-go "$version" acl-matrix pass "$(grep -o '[0-9]* rows, .* too' "$logs/acl-matrix.out" | head -n 1)"
else
  failed=1
  result confluent-kafka-go "$version" acl-matrix fail \
    "$(grep -E '^\s+e2e_authz.*want' "$logs/acl-matrix.out" | head -n 5 | tr -s ' \n' ' ' | cut -c1-600)"
  echo "-- acl-matrix failures:"; grep -E -- '--- FAIL|e2e_authz' "$logs/acl-matrix.out" | head -n 40
fi
exit $failed
