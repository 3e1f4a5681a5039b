// Package rest is Kafka Connect's REST API (the Java worker's, field for
// field and message for message) as an http.Handler over api.Herder: the
// connectors and their configs, statuses, tasks, restarts, target states,
// offsets (KIP-875) and active topics (KIP-558); the connector plugins and
// config validation; the worker's loggers (KIP-495, worker scope over
// slog.LevelVar); the health check (KIP-1017).
//
// One file per resource group, routes as net/http ServeMux patterns, and one
// place (errors.go) that turns the herder's typed errors into Kafka's
// {"error_code":N,"message":"..."} bodies. A herder that is not the leader
// answers *api.NotLeaderError and the request goes to the leader's URL, as
// Kafka's HerderRequestHandler sends it (forward.go). docs/connect/rest.md
// lists every endpoint and what differs from the Java worker.
package rest
