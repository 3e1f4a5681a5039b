// Package member is a Connect worker's membership of its Kafka group, as
// Kafka's WorkerCoordinator and WorkerGroupMember: it drives the classic
// group protocol itself (FindCoordinator, JoinGroup, SyncGroup, Heartbeat,
// LeaveGroup through franz-go's kgo client) with protocol type "connect"
// and Kafka's Connect subprotocols ("sessioned", "compatible", "default"),
// their metadata and assignment bytes exactly as Kafka's ConnectProtocol
// and IncrementalCooperativeConnectProtocol write them, so Samsa workers
// and Java workers can share a group. The leader assigns with KIP-415's
// incremental cooperative algorithm (AssignIncremental, a pure function)
// or, when the group speaks the eager protocol, round-robin (AssignEager).
// See docs/connect/membership.md.
package member
