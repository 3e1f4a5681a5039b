// Package pgcdc is a PostgreSQL change data capture source connector that
// speaks Debezium's language: class io.debezium.connector.postgresql.PostgresConnector,
// Debezium's config names, topics, change event envelope, source block and
// offsets, so consumers written for Debezium read its records unchanged.
//
// One task does everything on Poll's goroutine. It creates a logical
// replication slot (pgoutput) that exports a snapshot, reads every included
// table in a REPEATABLE READ transaction that imported that snapshot (op
// "r" records), then streams the slot from the snapshot's consistent point
// (op "c", "u", "d", "t", and tombstones). The slot is told a position
// (StandbyStatusUpdate's flush LSN) only once the runtime has stored an
// offset past it, read back through SourceTaskContext.Offset in Commit and
// capped by the first record not yet acknowledged (CommitRecord): a crash
// re-reads from the slot what Kafka may not have, and never skips.
//
// Files: config.go (the ConfigDef and parsed settings), catalog.go
// (connections, publication, slot, catalog queries), types.go (column
// types to Connect schemas and values), schema.go (the Debezium schemas),
// emitter.go (records), snapshot.go, stream.go (pgoutput decoding), offset.go
// (positions, offsets, the in-flight floor), task.go (the task's phases).
// docs/connect/postgres-cdc.md is the user's guide.
package pgcdc
