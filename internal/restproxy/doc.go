// Package restproxy is Samsa's REST Proxy: Confluent's REST Proxy API
// (issue 17) served over HTTP and answered by talking to a Kafka cluster as
// a client only (franz-go's kgo and kadm), so it runs against any Kafka
// cluster and never reaches into broker internals.
//
// It serves every operation of Confluent's v3 API (api/v3/openapi.yaml,
// vendored in test/compat/rest, is the contract): clusters, brokers and
// their configs, topics, partitions, replicas, configs with :alter
// batches, reassignments, produce (single, streaming, records:batch),
// consumer groups classic and KIP-848 with lags, ACLs; and all of v2:
// topics, partitions, brokers, produce in every embedded format (the
// schema formats through a Schema Registry and pkg/serde), and consumer
// instances (http_v2_consumers.go, consumers.go): each a franz-go client
// that is a member of its consumer group, held by the proxy between
// requests, owned by its principal, closed when idle. The routes are net/http
// ServeMux patterns, one file per resource group (http_clusters.go,
// http_topics.go ...); errors.go is the one place that turns typed errors
// and Kafka error codes into Confluent's body {"error_code":N,"message":"..."}.
// In front of the API (Proxy.Service): TLS and basic authentication
// (internal/httpauth), per-principal rate limits, and for users the
// cluster logs in a pooled Kafka client of their own (principals.go), so
// the cluster's ACLs apply to them. samsa serve runs it on
// samsa.rest.listener, samsa rest against any cluster.
// docs/DESIGN-restproxy.md is its design, endpoint by endpoint.
package restproxy
