// Package schema parses the three formats Confluent's Schema Registry
// stores (Avro with hamba/avro, JSON Schema with santhosh-tekuri/jsonschema,
// Protobuf with bufbuild/protocompile), gives each its canonical and
// normalized forms, and checks whether one schema can read data written
// with another, by Confluent's rules and in its words (issue 16,
// docs/DESIGN-schemaregistry.md). It does no I/O: references come
// resolved, from the registry.
package schema
