package schema

// Avro, as Confluent's registry serves it. hamba/avro parses and
// validates (names, defaults, references); the canonical and normalized
// texts are written here from the request's JSON, because Confluent
// stores what Java's Schema.toString gives (docs, defaults, aliases and
// custom properties kept) while hamba's String is Avro's parsing
// canonical form, which drops them. The compatibility rules are in
// avro_compat.go, the JSON writer in avro_canonical.go.

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/hamba/avro/v2"
)

var _ = register(Avro, parseAvro, canReadAvro)

// avroSchema is a parsed Avro schema.
type avroSchema struct {
	parsed     avro.Schema
	doc        any // the request's JSON, for the resolved format
	canonical  string
	normalized string
	refs       []Ref
}

func (s *avroSchema) Type() Type         { return Avro }
func (s *avroSchema) Canonical() string  { return s.canonical }
func (s *avroSchema) Normalized() string { return s.normalized }
func (s *avroSchema) References() []Ref  { return s.refs }

// parseAvro parses text with its references loaded first into a cache of
// its own: named types of one request never leak into another, and a ref
// parsed here is visible only to this schema.
func parseAvro(text string, refs []Ref) (Schema, error) {
	cache := &avro.SchemaCache{}
	for _, r := range refs {
		if r.Type != "" && r.Type != Avro {
			return nil, fmt.Errorf("%w: reference %q (subject %q version %d) is a %s schema; an Avro schema can reference only Avro schemas",
				ErrInvalid, r.Name, r.Subject, r.Version, r.Type)
		}
		if _, err := avro.ParseWithCache(r.Schema, "", cache); err != nil {
			return nil, fmt.Errorf("%w: reference %q (subject %q version %d): %s",
				ErrInvalid, r.Name, r.Subject, r.Version, avroErrText(err))
		}
	}
	doc, err := decodeAvroJSON(text)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	parsed, err := avro.ParseWithCache(text, "", cache)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrInvalid, avroErrText(err))
	}
	canonical, err := writeAvroJSON(doc, false)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	normalized, err := writeAvroJSON(doc, true)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return &avroSchema{parsed: parsed, doc: doc, canonical: canonical, normalized: normalized, refs: refs}, nil
}

// avroErrText drops hamba's "avro: " prefix: the registry's message
// already says the schema is an invalid Avro schema.
func avroErrText(err error) string {
	return strings.TrimPrefix(err.Error(), "avro: ")
}

// decodeAvroJSON reads text as exactly one JSON value, numbers kept as
// written. Java's parser refuses text that is not JSON or has anything
// after the value; hamba would read such text as a type name and report
// an unknown type, which tells the user less.
func decodeAvroJSON(text string) (any, error) {
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("invalid JSON: %v", err)
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("invalid JSON: unexpected content after the schema")
	}
	return v, nil
}

// AvroParsingCanonicalForm is Avro's Parsing Canonical Form of s (the
// specification's, as hamba writes it): the text Avro's fingerprints hash.
// ok is false when s is not an Avro schema.
func AvroParsingCanonicalForm(s Schema) (form string, ok bool) {
	as, ok := s.(*avroSchema)
	if !ok {
		return "", false
	}
	return as.parsed.String(), true
}

// AvroFingerprint is the CRC-64-AVRO (Rabin) fingerprint of s's parsing
// canonical form, the one Avro's single-object encoding and Java's
// SchemaNormalization.parsingFingerprint64 use. It identifies a schema's
// wire shape, docs and defaults aside, so the registry can find schemas
// that read and write the same bytes. ok is false when s is not Avro.
func AvroFingerprint(s Schema) (fp uint64, ok bool) {
	as, ok := s.(*avroSchema)
	if !ok {
		return 0, false
	}
	b, err := as.parsed.FingerprintUsing(avro.CRC64Avro)
	if err != nil || len(b) != 8 {
		return 0, false
	}
	return binary.BigEndian.Uint64(b), true
}

// AvroDifference renders an Avro incompatibility as Confluent's registry
// does in its error messages and verbose compatibility answers:
// description in Confluent's words, with the reader's and writer's roles
// named ("new" and "old" for a BACKWARD check, the reverse for FORWARD),
// additionalInfo Avro's own message.
func AvroDifference(inc Incompatibility, readerRole, writerRole string) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "{errorType:'%s', description:'%s', additionalInfo:'%s'}",
		inc.Kind, avroDescription(inc, readerRole, writerRole), inc.Message)
	return b.String()
}

// avroDescription is Confluent's description of one incompatibility
// (its avro.Difference), in reader and writer roles.
func avroDescription(inc Incompatibility, reader, writer string) string {
	p := inc.Path
	switch inc.Kind {
	case avroFixedSizeMismatch:
		return fmt.Sprintf("The size of FIXED type field at path '%s' in the %s schema does not match with the %s schema", p, reader, writer)
	case avroTypeMismatch:
		return fmt.Sprintf("The type (path '%s') of a field in the %s schema does not match with the %s schema", p, reader, writer)
	case avroNameMismatch:
		return fmt.Sprintf("The name of the schema has changed (path '%s')", p)
	case avroMissingEnumSymbols:
		return fmt.Sprintf("The %s schema is missing enum symbols '%s' at path '%s' in the %s schema", reader, inc.Message, p, writer)
	case avroMissingUnionBranch:
		return fmt.Sprintf("The %s schema is missing a type inside a union field at path '%s' in the %s schema", reader, p, writer)
	case avroReaderFieldMissingDefault:
		return fmt.Sprintf("The field '%s' at path '%s' in the %s schema has no default value and is missing in the %s schema", inc.Message, p, reader, writer)
	}
	return ""
}
