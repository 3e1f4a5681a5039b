// Package msgindex is Confluent's Protobuf message indexes: the array a
// Protobuf record carries after the schema ID of the Schema Registry's
// wire format, which names the message of the schema's file the record
// is (the index of its top-level message, then of each nested message
// down to it). It writes and reads the array and follows it in a file
// descriptor. No I/O: a leaf, so the broker's schema ID validation and
// pkg/serde read the same bytes alike (issue 16,
// docs/DESIGN-schemaregistry.md).
package msgindex
