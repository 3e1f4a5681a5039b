// Package txn is the transaction coordinator: transactional producer IDs
// and epochs (InitProducerId), the transaction state machine of KIP-98
// (AddPartitionsToTxn, AddOffsetsToTxn, EndTxn), zombie fencing by epoch
// bump, KIP-360 producer recovery, KIP-890 transactions version 2
// (partitions added by the leaders, an epoch bump on every EndTxn), the
// transaction timeout and the expiry of transactional IDs, and the admin
// view (DescribeTransactions, ListTransactions, KIP-664). State is kept in
// the compacted __transaction_state topic in Apache Kafka's own key and
// value formats, so a broker restarted mid-transaction finishes what it
// had decided.
//
// Like internal/group, the broker's handler files stay thin: decode, call
// the method of the same name, encode the kmsg response. The coordinator
// writes and replays __transaction_state through Log, gets producer IDs and
// writes markers through Deps. See docs/DESIGN-txn.md.
//
// # Files
//
//	coordinator.go  Coordinator, Log, Deps, Start/Stop, Load/Unload, the ID table, state writes, completion
//	config.go       Config, with Kafka's names and defaults
//	state.go        txn and txnState, the states and the transaction.version feature
//	api_init.go     InitProducerID, the fence-and-abort of an ongoing transaction
//	api_add.go      AddPartitionsToTxn (v0-3 producers, v4+ leaders), AddOffsetsToTxn
//	api_end.go      EndTxn (v0-4, v5 for transaction version 2)
//	api_admin.go    DescribeTransactions, ListTransactions
//	expire.go       AbortTimedOut, RemoveExpired: the two sweeps
//	records.go      __transaction_state keys, values and batches
//	load.go         replay of a __transaction_state partition
//	partition.go    PartitionFor
//	memlog.go       MemLog, an in-memory Log
//	errors.go       error codes and the mapping of append errors
//
// # Lock order
//
//	txn.mu  ->  Coordinator.mu
//
// Coordinator.mu guards only the table and is never held during I/O. A
// txn's lock is held over the append of its state, so the log holds one
// ID's records in order; it is released while markers are written (the txn
// is marked completing), so a slow partition does not block the sweeps or
// the admin APIs.
package txn
