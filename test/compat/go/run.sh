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
exec go run . "$@"
