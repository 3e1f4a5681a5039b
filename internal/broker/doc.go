// Package broker is the Kafka-protocol front door: listeners, one read and
// one write goroutine per connection, request framing and dispatch, and one
// handler file per API key (NN_snake_name.go, numbered by Kafka's API key,
// each opening with a comment that gives its versions, behaviour and what it
// leaves out). It wires the engines below it together and is the only
// production importer of the cluster-logic packages.
//
// A connection processes its requests in order, one at a time, as Kafka
// does: the reader decodes a request, runs its handler and queues the
// encoded response; the writer sends responses in that order, streaming
// fetched record bytes from segment files with sendfile(2) on plaintext
// listeners. See docs/DESIGN-broker.md.
package broker
