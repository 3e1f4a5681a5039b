// Package metadata is the cluster metadata as Kafka's KRaft keeps it: a log of
// records (cluster ID set, broker registered, topic created, partition
// changed, config set, topic removed, producer-ID block taken, feature level
// set, ACL added or removed, SCRAM credential set or removed, client quota
// set or removed) and an immutable Image that is what you get after
// applying them in order.
//
// Client quotas are kept by entity (QuotaEntity: a user, a client ID, both,
// or an IP, each part a name or its type's default) with their values by
// key; the key names Kafka's QuotaConfig defines are exported here, below
// the controller that validates them and the enforcement code that reads
// them.
//
// SCRAM credentials are kept as Kafka keeps them: salt, StoredKey,
// ServerKey and iterations, never a password or a salted password; their
// String methods hide the bytes so a stray log line cannot leak them.
//
// The controller writes records through Raft and every node applies the same
// committed records to its own Image, so the package must be deterministic:
// Image.Apply is a pure function of the image and the records, takes no time,
// randomness or I/O, and either applies a whole batch or returns an error and
// changes nothing. Randomness a record needs (topic IDs, the cluster ID) is
// drawn by the writer before the record exists.
//
// Images are copy-on-write. Applying a batch copies only the maps and topics
// the batch touches, so an unchanged topic keeps the same *TopicImage from one
// image to the next; DiffTopics relies on that to find what changed by
// pointer comparison. Anything an Image returns by pointer or slice is shared
// and must not be modified.
//
// Apply checks structural invariants (a partition for a topic that exists,
// replicas without duplicates, an ISR inside the replicas, one name per
// topic) but not policy: config names and values, replication factors and
// topic-name legality are the controller's to validate before it writes. An
// image must replay any record an older version accepted, so a config name
// dropped from the catalog later must not make replay fail.
//
// Records are encoded as JSON envelopes {"type":..., "v":1, "data":...}, one
// batch per Raft entry; a snapshot is a header line and the records that
// rebuild the image (see WriteSnapshot). See docs/DESIGN-controller.md.
//
// The package is L1: it imports only the standard library and
// internal/model.
package metadata
