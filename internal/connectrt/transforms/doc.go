// Package transforms is Kafka Connect's Single Message Transforms and
// predicates (KIP-66, KIP-585) with Kafka's class names, config names,
// defaults and validation messages, and the chain a connector's
// transforms=... and predicates=... configs build (Chain).
//
// Each transform works on schemaless values (map[string]any) and on
// values with a schema (*connect.Struct); the Key and Value variants
// differ only in which half of the record they rewrite (side). A
// transform that builds a new struct schema keeps it in a small cache
// keyed by the input schema, as Kafka's LRUCache of 16, so a stream of
// records with one schema builds it once and every output record shares
// one *connect.Schema.
//
// docs/connect/transforms.md lists every transform and predicate, its
// options, and what differs from Kafka and why.
package transforms
