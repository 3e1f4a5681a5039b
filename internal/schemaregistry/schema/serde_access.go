package schema

import "github.com/hamba/avro/v2"

// What pkg/serde needs of a parsed schema beyond the registry's view: the
// Avro schema to encode and decode with, and JSON Schema validation of a
// payload. Reached through interface assertions so that Schema stays the
// registry's small interface.

// AvroSchema is the parsed hamba schema, its references resolved.
func (s *avroSchema) AvroSchema() avro.Schema { return s.parsed }

// Validate checks a JSON value, as jsonschema.UnmarshalJSON decodes it
// (numbers as json.Number), against the schema.
func (s *jsonSchema) Validate(v any) error { return s.compiled.Validate(v) }
