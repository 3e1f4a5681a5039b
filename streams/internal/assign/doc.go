// Package assign places a Kafka Streams application's tasks on its
// instances: the task assignor (every task active on exactly one instance,
// balanced over the instances' threads and sticky to where each task ran,
// standby replicas of stateful tasks on other instances), the
// subscription and assignment user data the group members exchange, and
// the franz-go GroupBalancer (protocol "samsa-stream") that carries them
// through a classic consumer group and runs the assignor on the leader.
//
// The assignor is a pure function (Assign): no clock, no I/O, the same
// output for the same input, so it is tested by tables and properties.
// The balancer is the only part that talks to franz-go; it asks the
// runtime for the application's tasks through TaskSource and hands each
// member's decoded assignment (standbys, the endpoints' partitions for
// interactive queries, the leader's error code) back to the runtime.
// docs/DESIGN-streams.md ("assign") describes the rules and the wire
// formats.
package assign
