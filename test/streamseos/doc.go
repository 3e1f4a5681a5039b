// Package streamseos tests that a stream application under
// exactly_once_v2 keeps its promise while its instances are killed: three
// processes of eosapp count keys under a continuous load, are killed with
// SIGKILL and restarted, and the read_committed output must hold every
// count of every key exactly once (1, 2, ... n per key, no gap, no
// repeat) and end at the number of records produced.
package streamseos
