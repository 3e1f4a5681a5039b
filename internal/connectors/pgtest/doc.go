// Package pgtest starts a real PostgreSQL server for tests: Debian's
// postgresql binaries (initdb, postgres) on a free loopback port, a data
// directory of its own, logical replication enabled (for the CDC
// connector), stopped and removed when the test ends. Imported by tests only.
//
// PostgreSQL refuses to run as root; as root (CI) the server runs as the
// `postgres` system user, which owns the data directory.
package pgtest
