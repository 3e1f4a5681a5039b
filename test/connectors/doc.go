// Package connectors runs the built-in connectors end to end through the
// real Connect runtime: a Samsa broker (with its Schema Registry) and
// `samsa connect` worker processes in distributed mode, connectors created
// through the REST API, data checked where it lands (PostgreSQL, SQLite,
// an S3 store, an HTTP server, the topics themselves), and workers stopped
// or killed mid-stream. Tests only.
package connectors
