// Package serde serializes and deserializes Kafka record keys and values
// in Confluent's Schema Registry wire format (a magic byte 0, the schema's
// 4-byte big-endian ID, for Protobuf the message-index array, then the
// value in the format's encoding), for Avro (hamba/avro), JSON Schema
// (santhosh-tekuri/jsonschema) and Protobuf (dynamicpb and protojson). It
// talks to a registry (Samsa's or Confluent's) through franz-go's sr
// client, names subjects by Confluent's strategies (TopicNameStrategy,
// RecordNameStrategy, TopicRecordNameStrategy), registers schemas or looks
// them up or takes a subject's latest, and caches schemas by ID and IDs
// by schema. Values are Go values or JSON text (Avro's JSON encoding, as
// kafka-avro-console-producer reads it). The formats are parsed by
// internal/schemaregistry/schema, the same code the registry checks them
// with. It is a client-side package: it reaches the registry over HTTP
// only and imports no broker internals; samsa produce, consume and schema
// use it.
package serde
