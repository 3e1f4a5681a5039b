package serde

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/sr"
	"google.golang.org/protobuf/proto"

	pkgserde "github.com/samsa-io/samsa/pkg/serde"
)

// DefaultRegistryTimeout bounds each registry request a registry serde
// makes: Serialize and Deserialize take no context, and a stream thread
// must not wait forever on a registry that does not answer.
const DefaultRegistryTimeout = 30 * time.Second

// RegistryOpt configures a registry serde (Avro, JSONSchema, Protobuf).
type RegistryOpt func(*registryConfig)

type registryConfig struct {
	refs    []sr.SchemaReference
	timeout time.Duration
}

// WithReferences names the registered schemas the schema refers to
// (Avro named types, JSON Schema $refs, Protobuf imports).
func WithReferences(refs ...sr.SchemaReference) RegistryOpt {
	return func(c *registryConfig) { c.refs = append(c.refs, refs...) }
}

// WithRegistryTimeout bounds each registry request (default
// DefaultRegistryTimeout). Requests found in pkg/serde's caches make none.
func WithRegistryTimeout(d time.Duration) RegistryOpt {
	return func(c *registryConfig) { c.timeout = d }
}

// Avro writes T in Confluent's wire format with an Avro schema, as
// Confluent's KafkaAvroSerializer: reg (pkg/serde's Serde: the registry
// client, the subject name strategy, auto-registration, use-latest)
// finds or registers schemaText under the topic's subject (with the
// default strategy <topic>-key when isKey, else <topic>-value) and
// hamba/avro encodes T with it: T is a Go value hamba/avro maps to the
// schema (a struct with `avro` tags, a map[string]any, a primitive).
// Deserialize reads any payload whose writer schema (looked up by the
// payload's ID) hamba/avro can decode into T.
func Avro[T any](reg *pkgserde.Serde, schemaText string, isKey bool, opts ...RegistryOpt) Serde[T] {
	return newRegistrySerde[T](reg, pkgserde.Source{Type: pkgserde.Avro, Text: schemaText}, isKey, opts, newValue[T])
}

// JSONSchema writes T in Confluent's wire format with a JSON Schema, as
// Confluent's KafkaJsonSchemaSerializer: T is encoded by encoding/json
// and validated against the schema before it is written (an invalid
// value is refused with pkg/serde.ErrInvalidValue). Subjects as Avro's.
func JSONSchema[T any](reg *pkgserde.Serde, schemaText string, isKey bool, opts ...RegistryOpt) Serde[T] {
	return newRegistrySerde[T](reg, pkgserde.Source{Type: pkgserde.JSON, Text: schemaText}, isKey, opts, newValue[T])
}

// Protobuf writes T in Confluent's wire format with a Protobuf schema, as
// Confluent's KafkaProtobufSerializer: the message indexes of T's message
// in the schema, then T's binary encoding. schemaText is the .proto file
// registered for the subject; it must define T's message under its full
// name. T is a generated message type (a pointer, as *pb.Order):
// Deserialize makes a new T from T's message type, so dynamicpb messages,
// which have none until built, are refused (use pkg/serde for those).
func Protobuf[T proto.Message](reg *pkgserde.Serde, schemaText string, isKey bool, opts ...RegistryOpt) Serde[T] {
	name, err := protoName[T]()
	s := newRegistrySerde[T](reg, pkgserde.Source{Type: pkgserde.Protobuf, Text: schemaText, Message: name}, isKey, opts, newProto[T])
	if err != nil {
		s.err = err
	}
	return s
}

type registrySerde[T any] struct {
	reg     *pkgserde.Serde
	src     pkgserde.Source
	isKey   bool
	timeout time.Duration
	newT    func() (T, any, error) // the value to return, and what Decode fills
	err     error                  // a construction error, answered by every call

	encoders sync.Map // topic -> *pkgserde.Encoder
}

func newRegistrySerde[T any](reg *pkgserde.Serde, src pkgserde.Source, isKey bool, opts []RegistryOpt, newT func() (T, any, error)) *registrySerde[T] {
	c := registryConfig{timeout: DefaultRegistryTimeout}
	for _, o := range opts {
		o(&c)
	}
	src.References = c.refs
	s := &registrySerde[T]{reg: reg, src: src, isKey: isKey, timeout: c.timeout, newT: newT}
	switch {
	case reg == nil:
		s.err = fmt.Errorf("serde: the %s serde needs a registry (pkg/serde.New)", src.Type)
	case c.timeout <= 0:
		s.err = fmt.Errorf("serde: the registry timeout must be positive, not %v", c.timeout)
	}
	return s
}

func (s *registrySerde[T]) Serialize(topic string, v T) ([]byte, error) {
	if s.err != nil {
		return nil, s.err
	}
	enc, err := s.encoder(topic)
	if err != nil {
		return nil, err
	}
	b, err := enc.Encode(v)
	if err != nil {
		return nil, fmt.Errorf("serde: %s value for subject %q: %w", s.src.Type, enc.Subject(), err)
	}
	return b, nil
}

// encoder is the topic's encoder, made once: pkg/serde's ForTopic parses
// the schema each time it is called, which a per-record call cannot pay.
func (s *registrySerde[T]) encoder(topic string) (*pkgserde.Encoder, error) {
	if e, ok := s.encoders.Load(topic); ok {
		return e.(*pkgserde.Encoder), nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	enc, err := s.reg.ForTopic(ctx, topic, s.isKey, s.src)
	if err != nil {
		return nil, fmt.Errorf("serde: %s schema for topic %q (%s): %w", s.src.Type, topic, keyOrValue(s.isKey), err)
	}
	s.encoders.Store(topic, enc)
	return enc, nil
}

func (s *registrySerde[T]) Deserialize(topic string, data []byte) (T, error) {
	v, into, err := s.newT()
	if err == nil {
		err = s.err
	}
	if err != nil {
		return v, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	if _, err := s.reg.Decode(ctx, data, into); err != nil {
		return v, decodeErr(topic, s.isKey, err)
	}
	if p, ok := into.(*T); ok {
		v = *p
	}
	return v, nil
}

// decodeErr marks what is wrong with the bytes themselves as
// ErrInvalidData, beside pkg/serde's own error; a registry that cannot be
// reached is not invalid data.
func decodeErr(topic string, isKey bool, err error) error {
	for _, bad := range []error{pkgserde.ErrPayloadMismatch, pkgserde.ErrShortPayload, pkgserde.ErrUnknownMagicByte, pkgserde.ErrBadMessageIndexes} {
		if errors.Is(err, bad) {
			return fmt.Errorf("%w: topic %q (%s): %w", ErrInvalidData, topic, keyOrValue(isKey), err)
		}
	}
	return fmt.Errorf("serde: topic %q (%s): %w", topic, keyOrValue(isKey), err)
}

func keyOrValue(isKey bool) string {
	if isKey {
		return "key"
	}
	return "value"
}

// newValue decodes into a T's address.
func newValue[T any]() (T, any, error) {
	var v T
	return v, &v, nil
}

// newProto makes a new message of T's type to decode into.
func newProto[T proto.Message]() (v T, into any, err error) {
	defer func() {
		if recover() != nil {
			err = fmt.Errorf("serde: Protobuf[%T] cannot make a message from T's zero value: T must be a generated message type", v)
		}
	}()
	var zero T
	m, ok := zero.ProtoReflect().Type().New().Interface().(T)
	if !ok {
		return zero, nil, fmt.Errorf("serde: Protobuf[%T]: T's message type makes %T", zero, m)
	}
	return m, m, nil
}

// protoName is the full name of T's message, which pkg/serde picks in
// the schema and writes the indexes of.
func protoName[T proto.Message]() (name string, err error) {
	defer func() {
		if recover() != nil {
			var zero T
			err = fmt.Errorf("serde: Protobuf[%T] cannot read T's descriptor from its zero value: T must be a generated message type", zero)
		}
	}()
	var zero T
	return string(zero.ProtoReflect().Descriptor().FullName()), nil
}
