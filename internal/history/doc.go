// Package history records what the clients of a failure test observed and
// checks it for anomalies: lost, duplicated and misplaced records, reads
// of aborted or uncommitted transactional data, consumers that go
// backwards or skip a record, acknowledgements past the end of the log.
//
// Test clients write events as JSON lines (one object per line, its "type"
// naming the event) through a Writer, or in any language by following
// docs/HISTORY-CHECK.md. There are five events: a produce attempt and its
// outcome, a transaction's outcome, a record a consumer received, and the
// final read: after the test, one reader reads every partition from the
// log start to the high watermark under read_uncommitted and again under
// read_committed, writing each record and then where it stopped.
//
// The final read_uncommitted read is the truth of each partition (offset to
// value). Check compares every other observation with it: an acknowledged
// produce must be there at its offset, every observer must agree on what
// an offset holds, a read_committed observer must see only committed
// transactional data, and a consumer must move forward without skipping a
// record its isolation level can see. Produce values are unique per
// attempt, which is what makes a record identifiable; an attempt whose
// outcome is unknown may or may not be in the log and is only counted.
//
// The checker is pure: a History in, a Report out, no I/O, no clock. One
// fault may show as several anomalies (an acknowledgement past the high
// watermark is also a lost write), each of which is true on its own.
//
// This is a client-side package: it imports only the standard library, so
// it runs against Samsa and Apache Kafka alike.
package history
