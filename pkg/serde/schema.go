package serde

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/hamba/avro/v2"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/twmb/franz-go/pkg/sr"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/samsa-io/samsa/internal/schemaregistry/schema"
)

// Schema is a registered schema, parsed, with what its format needs to
// encode and decode.
type Schema struct {
	ID         int // 0 until known
	Type       SchemaType
	Text       string
	References []sr.SchemaReference

	avro  avro.Schema                 // Avro
	json  jsonValidator               // JSON Schema
	title string                      // JSON Schema: its title, the record name
	file  protoreflect.FileDescriptor // Protobuf
}

type jsonValidator interface{ Validate(v any) error }

// messageDescriptor is the Protobuf message an encoder writes; nil for
// the other formats.
type messageDescriptor = protoreflect.MessageDescriptor

func newSchema(typ schema.Type, text string, refs []sr.SchemaReference, parsed schema.Schema) (*Schema, error) {
	s := &Schema{Type: typ, Text: text, References: refs}
	switch typ {
	case schema.Avro:
		a, ok := parsed.(interface{ AvroSchema() avro.Schema })
		if !ok {
			return nil, errors.New("serde: the Avro parser gives no hamba schema")
		}
		s.avro = a.AvroSchema()
	case schema.JSON:
		v, ok := parsed.(jsonValidator)
		if !ok {
			return nil, errors.New("serde: the JSON Schema parser gives no validator")
		}
		s.json = v
		var doc struct {
			Title string `json:"title"`
		}
		_ = json.Unmarshal([]byte(text), &doc) // a boolean schema has no title
		s.title = doc.Title
	case schema.Protobuf:
		f, ok := parsed.(interface {
			FileDescriptor() protoreflect.FileDescriptor
		})
		if !ok {
			return nil, errors.New("serde: the Protobuf parser gives no file descriptor")
		}
		s.file = f.FileDescriptor()
	default:
		return nil, fmt.Errorf("serde: schema type %s is not supported", typ)
	}
	return s, nil
}

// AvroSchema is an Avro schema as hamba/avro parsed it (its references
// resolved); nil for the other formats. Callers that map values to and
// from another model (Kafka Connect's converters) walk it.
func (s *Schema) AvroSchema() avro.Schema { return s.avro }

// FileDescriptor is a Protobuf schema's parsed file (its imports
// resolved); nil for the other formats.
func (s *Schema) FileDescriptor() protoreflect.FileDescriptor { return s.file }

// recordName is what RecordNameStrategy names the subject after.
func (s *Schema) recordName(msg messageDescriptor) string {
	switch s.Type {
	case schema.Avro:
		if n, ok := s.avro.(avro.NamedSchema); ok {
			return n.FullName()
		}
	case schema.JSON:
		return s.title
	case schema.Protobuf:
		if msg != nil {
			return string(msg.FullName())
		}
	}
	return ""
}

// MessageName is the full name of the Protobuf message that a record's
// message indexes name in this schema (Confluent's
// ProtobufSchema.toMessageName): the record name RecordNameStrategy
// gives the record's subject. The error wraps ErrBadMessageIndexes when
// they name no message, or when the schema is not Protobuf.
func (s *Schema) MessageName(indexes []int) (string, error) {
	if s.Type != schema.Protobuf {
		return "", fmt.Errorf("serde: %w: a %s schema has no message indexes", ErrBadMessageIndexes, s.Type)
	}
	md, err := messageAt(s.file, indexes)
	if err != nil {
		return "", err
	}
	return string(md.FullName()), nil
}

// message picks the Protobuf message an encoder writes; name must be empty
// for the other formats.
func (s *Schema) message(name string) (messageDescriptor, error) {
	if s.Type != schema.Protobuf {
		if name != "" {
			return nil, fmt.Errorf("serde: a message name (%q) applies only to Protobuf schemas, not %s", name, s.Type)
		}
		return nil, nil
	}
	return findMessage(s.file, name)
}

func (s *Schema) encoder(subject string, msg messageDescriptor) (*Encoder, error) {
	prefix := AppendHeader(nil, s.ID)
	if s.Type == schema.Protobuf {
		prefix = AppendMessageIndexes(prefix, messageIndexes(msg))
	}
	return &Encoder{schema: s, subject: subject, prefix: prefix, msg: msg}, nil
}

func (s *Schema) encode(msg messageDescriptor, v any) ([]byte, error) {
	switch s.Type {
	case schema.Avro:
		return avro.Marshal(s.avro, v)
	case schema.JSON:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		return b, s.validateJSON(b)
	case schema.Protobuf:
		return encodeProto(msg, v)
	}
	return nil, fmt.Errorf("schema type %s is not supported", s.Type)
}

func (s *Schema) encodeJSON(msg messageDescriptor, text []byte) ([]byte, error) {
	switch s.Type {
	case schema.Avro:
		return avroJSONToBinary(s.avro, text)
	case schema.JSON:
		text = bytes.TrimSpace(text)
		return text, s.validateJSON(text)
	case schema.Protobuf:
		return protoJSONToBinary(msg, text)
	}
	return nil, fmt.Errorf("schema type %s is not supported", s.Type)
}

func (s *Schema) decodeJSON(body []byte, validate bool) ([]byte, error) {
	switch s.Type {
	case schema.Avro:
		return avroBinaryToJSON(s.avro, body)
	case schema.JSON:
		if !json.Valid(body) {
			return nil, fmt.Errorf("%w: not JSON", ErrPayloadMismatch)
		}
		if validate {
			if err := s.validateJSON(body); err != nil {
				return nil, fmt.Errorf("%w: %v", ErrPayloadMismatch, err)
			}
		}
		return body, nil
	case schema.Protobuf:
		return protoBinaryToJSON(s.file, body)
	}
	return nil, fmt.Errorf("schema type %s is not supported", s.Type)
}

func (s *Schema) decode(body []byte, into any, validate bool) error {
	switch s.Type {
	case schema.Avro:
		if err := avro.Unmarshal(s.avro, body, into); err != nil {
			return fmt.Errorf("%w: %v", ErrPayloadMismatch, err)
		}
		return nil
	case schema.JSON:
		if validate {
			if err := s.validateJSON(body); err != nil {
				return fmt.Errorf("%w: %v", ErrPayloadMismatch, err)
			}
		}
		if err := json.Unmarshal(body, into); err != nil {
			return fmt.Errorf("%w: %v", ErrPayloadMismatch, err)
		}
		return nil
	case schema.Protobuf:
		return decodeProto(s.file, body, into)
	}
	return fmt.Errorf("schema type %s is not supported", s.Type)
}

// validateJSON checks a JSON document against the schema.
func (s *Schema) validateJSON(text []byte) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(text))
	if err != nil {
		return fmt.Errorf("invalid JSON: %v", err)
	}
	if err := s.json.Validate(doc); err != nil {
		return errors.New(oneLine(err.Error()))
	}
	return nil
}

// oneLine folds the validator's indented multi-line report.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}
