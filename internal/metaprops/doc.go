// Package metaprops reads and writes Kafka's meta.properties, the file that
// says which cluster and node a log directory belongs to, and checks a
// node's directories against each other before it starts.
//
// The file is KRaft's version 1, as kafka-storage.sh format writes it: a
// comment header (an empty comment and the date, as Java's Properties.store
// puts them), then node.id, directory.id (KIP-858: a random Kafka UUID per
// directory), version=1 and cluster.id. Decode reads what Kafka writes, with
// Java's properties syntax (escapes, continuation lines, the three key
// separators); it never panics, and a file it cannot use (torn, garbled, a
// field missing or out of range) is an error wrapping ErrCorrupt that names
// the line or the field. A version 0 file (a ZooKeeper-mode broker's) is
// refused with its own error.
//
// Write replaces the file atomically through internal/vfs (a temporary
// file, fsync, rename, fsync of the directory): after a crash the file is
// either absent, or whole with the old or the new content.
//
// An Ensemble is a node's set of directories (every log dir and the
// metadata log dir) as found on disk. Verify is Kafka's
// MetaPropertiesEnsemble.verify: the formatted directories agree on the
// cluster ID, carry this node's ID, and no two share a directory ID. Check
// adds that every directory is formatted, which is what a node of a
// multi-node quorum requires at start-up; Format is kafka-storage.sh format.
// Errors name the directory and say what to run.
package metaprops
