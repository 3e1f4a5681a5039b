// Package serde turns the keys and values of a Samsa Streams topology into
// bytes and back, in the byte formats Kafka's own serdes write, so a
// topology written with this library and one written with Kafka Streams
// read and write each other's topics, changelogs and repartition topics.
//
// A Serde[T] never sees a null: the runtime maps nil bytes to null before
// calling Deserialize and never calls Serialize for a null. So Deserialize
// may take an empty slice as a value (the empty string, an empty []byte)
// and rejects bytes of a wrong length with an error wrapping
// ErrInvalidData.
//
// The built-in serdes follow org.apache.kafka.common.serialization.Serdes:
// String (UTF-8), Bytes, Int16 (Short), Int32 (Integer), Int64 (Long),
// Float32 (Float), Float64 (Double) big-endian, Bool (one byte, 0 or 1),
// UUID (its string form), Void (always null) and List. JSON[T] is
// encoding/json; Func adapts two functions. TimeWindowed and
// SessionWindowed are Kafka Streams' windowed key serdes, and the
// exported byte helpers (WindowKey, SessionKey, WindowStoreKey and their
// splitters) are the layouts the window and session stores and their
// changelogs keep. Avro, JSONSchema and Protobuf write Confluent's Schema
// Registry wire format through pkg/serde.
//
// It is a client-side package: it imports no broker internals.
package serde
