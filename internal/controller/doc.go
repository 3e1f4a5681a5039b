// Package controller is the active controller of Samsa's metadata quorum, in
// KRaft's "combined" shape: the controller runs inside the broker process as
// a one-voter hashicorp/raft quorum, so a laptop and a cluster run the same
// write path (KIP-500, KIP-631).
//
// A Controller owns the Raft node (a bolt log and stable store and file
// snapshots under <metadata dir>/raft, an in-memory transport unless a
// controller address is configured) and a state machine that applies
// committed batches of internal/metadata records to an immutable
// metadata.Image. On its first election it writes the cluster ID and the
// first feature levels (later levels are UpdateFeatures', never raised by a
// start); on every start it registers the local broker, and refuses
// metadata finalized at feature levels this version does not support.
//
// The write API (CreateTopics, DeleteTopics, CreatePartitions, AlterConfigs,
// IncrementalAlterConfigs, AllocateProducerIDs, ElectLeaders, CreateACLs,
// DeleteACLs, AlterUserScramCredentials, AlterClientQuotas, UpdateFeatures)
// validates a request against the current image the way Kafka's controller
// does, answers per item with Kafka error codes from kerr, and commits the valid
// items as one Raft entry.
// Writes are serialised from validation to commit; each returns once its
// records are applied, so Image shows them. Readers take Image lock-free and
// follow changes with Changed.
//
// The automatic balancer (balancer.go, samsa.balancer.enable) runs
// internal/balance's planner on the active controller and carries its plan
// out as reassignment records and preferred-leader elections.
//
// The package is L2: it imports L0/L1 packages and Raft, never the broker or
// another L2 package. See docs/DESIGN-controller.md.
package controller
