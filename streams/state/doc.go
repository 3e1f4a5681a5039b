// Package state holds Kafka Streams' state stores at the byte level, for
// the streams runtime and for users of the Processor API.
//
// Each kind of store (key-value, window, session) is one implementation
// over two engines: pebble on disk (OpenPebble...) and a B-tree in memory
// (NewInMemory...), so both variants behave alike by construction. Keys are
// ordered lexicographically by unsigned bytes, as in Kafka's RocksDB stores.
//
// Every store buffers its writes until Commit, with read-your-writes, and
// Abort discards them: the runtime commits after the producer flushed (at
// least once) or the transaction committed (exactly once), and aborts with
// an aborted transaction. A pebble Commit is one synced WAL write, so the
// data is on disk before the runtime writes the task's checkpoint file.
//
// Around a store sit the layers of Kafka Streams: change logging (each
// write reported in the changelog topic's key and value formats, and
// RestoreBatch to rebuild a store from those records), the record cache
// (dirty entries deduplicated per key, flushed to a listener on commit or
// eviction, which is how KTable emits are deduplicated), and the timestamped
// key-value format of KTables. Committed() views read the last commit from
// other goroutines (interactive queries). Checkpoint files (Kafka's .checkpoint format)
// and the per-task state directories with their lock files are here too.
//
// See docs/DESIGN-streams.md, section "state".
package state
