// Package jdbc is the JDBC source and sink connectors, with Confluent's
// kafka-connect-jdbc class names (io.confluent.connect.jdbc.JdbcSourceConnector
// and JdbcSinkConnector), configs and behaviour, for PostgreSQL (pgx) and
// SQLite (modernc.org/sqlite, no cgo) through database/sql; connection.url
// keeps its JDBC form and picks the driver.
//
// The source copies tables, or a query's rows, into topics: bulk, or
// incrementally by an incrementing column, a timestamp column, or both.
// Its offsets are Confluent's ({"table": name} -> {"incrementing": N,
// "timestamp": ms, "timestamp_nanos": ns}) and its queries use Confluent's
// strict comparisons, so a restart continues where the stored offset says.
//
// The sink writes each Put in one transaction (insert, upsert, update,
// tombstone deletes), creating and evolving tables when asked.
//
// docs/connect/jdbc.md is the user's page: configs, type mappings,
// offsets, delivery, failures and what is left out.
package jdbc
