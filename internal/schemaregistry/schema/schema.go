package schema

import (
	"errors"
	"fmt"
)

// Type is a schema's format, as Confluent's API names it in schemaType.
// An empty schemaType means Avro.
type Type string

const (
	Avro     Type = "AVRO"
	JSON     Type = "JSON"
	Protobuf Type = "PROTOBUF"
)

// Types lists the formats in the order GET /schemas/types answers them.
var Types = []Type{JSON, Protobuf, Avro}

// ParseType reads a request's schemaType: "" is Avro; names are
// case-sensitive, as in Confluent's registry.
func ParseType(s string) (Type, error) {
	switch Type(s) {
	case "", Avro:
		return Avro, nil
	case JSON, Protobuf:
		return Type(s), nil
	}
	return "", fmt.Errorf("%w: unknown schema type %q", ErrInvalid, s)
}

// Ref is a schema reference, resolved: Name is how the referring schema
// names it (an Avro full name, a JSON Schema $ref URL, a Protobuf import
// path), Subject and Version where it is registered, and Schema its text,
// which the registry looked up. Refs of a ref are listed too, each once,
// before those that use them.
type Ref struct {
	Name    string
	Subject string
	Version int
	Type    Type
	Schema  string
}

// ErrInvalid wraps every parse failure: the registry answers it with
// error code 42201 (invalid schema) and the error's text.
var ErrInvalid = errors.New("invalid schema")

// Schema is a parsed schema of one format.
type Schema interface {
	Type() Type
	// Canonical is the form the registry stores and compares to find an
	// already registered schema: for Avro, the text Java's
	// Schema.toString gives, as Confluent stores it (docs, defaults,
	// aliases and properties kept); for JSON Schema, the JSON re-encoded
	// compactly in its key order, as Confluent's Jackson keeps it; for
	// Protobuf, the file re-printed in the fixed layout of Confluent's
	// ProtobufSchema.canonicalString.
	Canonical() string
	// Normalized is the form used when a request sets normalize=true.
	Normalized() string
	// References are the refs the schema was parsed with.
	References() []Ref
}

// Parse parses text as a schema of type t, its references resolved in
// refs. Errors wrap ErrInvalid.
func Parse(t Type, text string, refs []Ref) (Schema, error) {
	p, ok := parsers[t]
	if !ok {
		return nil, fmt.Errorf("%w: schema type %s is not supported", ErrInvalid, t)
	}
	return p(text, refs)
}

// Incompatibility is one way a reader schema cannot read data written
// with a writer schema, in Confluent's terms: Kind its errorType
// (READER_FIELD_MISSING_DEFAULT_VALUE, TYPE_MISMATCH, ...; per format as
// Confluent names them), Path where in the schema (a JSON pointer such as
// /fields/1), Message the description Confluent gives.
type Incompatibility struct {
	Kind    string
	Path    string
	Message string
}

// String is Confluent's rendering of one incompatibility in an error or a
// verbose compatibility answer.
func (i Incompatibility) String() string {
	return fmt.Sprintf("{errorType:'%s', description:'%s', additionalInfo:'%s'}", i.Kind, i.Message, i.Path)
}

// CanRead checks whether data written with writer can be read with
// reader: the rule behind every compatibility level (BACKWARD checks the
// new schema reads the old one's data, FORWARD the reverse, FULL both;
// the transitive levels every older version). Both must be of the same
// type; schemas of different types are incompatible.
func CanRead(reader, writer Schema) []Incompatibility {
	if reader.Type() != writer.Type() {
		return []Incompatibility{{Kind: "TYPE_MISMATCH", Path: "/", Message: fmt.Sprintf("The schema types differ: %s and %s", reader.Type(), writer.Type())}}
	}
	c, ok := checkers[reader.Type()]
	if !ok {
		return nil
	}
	return c(reader, writer)
}

// parsers and checkers are filled by each format's file (avro.go,
// jsonschema.go, protobuf.go) through register.
var (
	parsers  = map[Type]func(text string, refs []Ref) (Schema, error){}
	checkers = map[Type]func(reader, writer Schema) []Incompatibility{}
)

// register adds a format; each format's file calls it from a package
// variable's initializer.
func register(t Type, parse func(string, []Ref) (Schema, error), canRead func(reader, writer Schema) []Incompatibility) bool {
	parsers[t], checkers[t] = parse, canRead
	return true
}
