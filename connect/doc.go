// Package connect is Samsa's public connector SDK: what a connector is made
// of in Kafka Connect's model, in Go. A source connector brings records in
// from another system, a sink connector takes them out; each splits its work
// into tasks that the runtime (internal/connectrt, `samsa connect`) runs on
// the workers of a Connect cluster, with offsets, rebalancing, converters,
// transforms and error handling done for it.
//
// The data model is Kafka Connect's: a Schema (schema.go) describes a value
// (primitive types, arrays, maps, structs, logical types such as Decimal
// and Timestamp); a Struct (struct.go) is a value of a struct schema. Values
// without a schema are plain Go values: nil, bool, the sized integers,
// float32/float64, string, []byte, []any and map[string]any. With a schema,
// a MAP value is map[any]any and a STRUCT value is *Struct.
//
// Records (record.go) carry a key and a value each with an optional schema,
// a topic, a partition, a timestamp and headers; a SourceRecord adds the
// source partition and offset that say where it came from in the other
// system, a SinkRecord the Kafka offset it was read at.
//
// A connector declares its configuration as a ConfigDef (configdef.go):
// names, types, defaults, importance, documentation, validators. The
// runtime validates a connector's config against it before starting it and
// answers Kafka Connect's config/validate endpoint from it.
//
// Plugins (plugin.go) name a connector by the class name Kafka uses and its
// aliases, so configs written for Kafka Connect's FileStream connectors run
// unchanged. Package connect/worker runs a worker with a user's own plugins
// beside the built-in ones. docs/CONNECT-SDK.md is the guide: a connector in
// one file, connect/example the guide's code.
package connect
