// Package convert holds Kafka Connect's converters and header converters
// under Kafka's and Confluent's class names, for the Connect runtime's
// key.converter, value.converter and header.converter: JsonConverter
// (Kafka's envelope {"schema":...,"payload":...} byte for byte, or plain
// JSON), StringConverter, ByteArrayConverter, the number converters,
// SimpleHeaderConverter (the runtime's default header converter), and
// Confluent's AvroConverter, JsonSchemaConverter and ProtobufConverter,
// which write Confluent's wire format with schemas registered in a Schema
// Registry through pkg/serde. New and NewHeader make one by class name or
// alias; Plugins lists them for /connector-plugins. A converter refuses
// configs it does not know and data that does not fit its schema, with
// Kafka's messages where Kafka has one; it never panics on bad bytes.
// docs/connect/converters.md describes each one and its mappings.
package convert
