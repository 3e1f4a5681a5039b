// Package schemaregistry is Confluent's Schema Registry over a Kafka
// topic (issue 16, docs/DESIGN-schemaregistry.md): subjects and their
// versions, global schema IDs, compatibility levels and modes, kept in a
// compacted topic (_schemas) in Confluent's record formats, and served
// with Confluent's REST API. It is a Kafka client only (franz-go), so it
// runs against Samsa or any Kafka cluster.
//
// The state (state.go) is built only by applying the topic's records, so
// every instance reading the same topic answers the same. A write
// (Registry.writeOp) catches up with the topic, decides against the
// state, produces its records with acks=all and waits until its own
// reader has applied them; writes are serialized within an instance.
// One instance writes at a time: the instances sharing a store elect a
// primary through a Kafka group (election.go) and the others forward
// writes to it over HTTP (forward.go).
//
// Subjects live in Confluent's contexts (context.go), each with IDs of
// its own. The API may require basic authentication, from a users file or
// a SASL login to the cluster (auth.go, kafkalogin.go), and speak TLS.
//
// The formats (parsing, canonical forms, the can-read rules) live in the
// schema subpackage; this package only picks which versions to check in
// which direction.
package schemaregistry
