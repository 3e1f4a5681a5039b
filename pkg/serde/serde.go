package serde

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/samsa-io/samsa/internal/schemaregistry/schema"
)

// More errors, beside the wire format's.
var (
	// ErrSchemaNotFound: the registry has no schema of the payload's ID
	// (Confluent's 40403), or none registered for the subject.
	ErrSchemaNotFound = errors.New("serde: schema not found")
	// ErrPayloadMismatch: the payload is not a value of its schema.
	ErrPayloadMismatch = errors.New("serde: payload does not match schema")
	// ErrInvalidValue: a value to serialize is not a value of the schema.
	ErrInvalidValue = errors.New("serde: value does not match schema")
)

// Serde serializes and deserializes values in Confluent's wire format,
// looking schemas up in (and registering them with) a Schema Registry
// through franz-go's sr client. It caches schemas by ID and IDs by
// subject and schema, as Confluent's CachedSchemaRegistryClient does; it
// is safe for concurrent use.
type Serde struct {
	cl               *sr.Client
	autoRegister     bool
	useLatest        bool
	normalize        bool
	validateOnDecode bool
	strategy         SubjectNameStrategy

	mu struct {
		sync.Mutex
		byID  map[int]*Schema
		idsBy map[string]int // subject and schema (registerKey) -> ID
	}
}

// Opt configures a Serde.
type Opt func(*Serde)

// AutoRegister registers the schema given to ForTopic under its subject
// when it is not there yet (Confluent's auto.register.schemas, default
// true). When false the schema must already be registered; it is looked up.
func AutoRegister(on bool) Opt { return func(s *Serde) { s.autoRegister = on } }

// UseLatestVersion makes ForTopic serialize with the subject's latest
// registered schema instead of the one given, which then only names the
// subject (Confluent's use.latest.version, default false). It takes
// precedence over AutoRegister.
func UseLatestVersion(on bool) Opt { return func(s *Serde) { s.useLatest = on } }

// Normalize asks the registry to normalize the schema when registering or
// looking it up (Confluent's normalize.schemas, default false).
func Normalize(on bool) Opt { return func(s *Serde) { s.normalize = on } }

// ValidateOnDecode validates a JSON Schema payload against its schema when
// deserializing (Confluent's json.fail.invalid.schema, default false).
// Serializing always validates.
func ValidateOnDecode(on bool) Opt { return func(s *Serde) { s.validateOnDecode = on } }

// WithSubjectNameStrategy picks how ForTopic names the subject (Confluent's
// key.subject.name.strategy and value.subject.name.strategy); the default
// is TopicNameStrategy.
func WithSubjectNameStrategy(st SubjectNameStrategy) Opt { return func(s *Serde) { s.strategy = st } }

// New returns a Serde over the registry client cl.
func New(cl *sr.Client, opts ...Opt) *Serde {
	s := &Serde{cl: cl, autoRegister: true, strategy: TopicNameStrategy}
	for _, o := range opts {
		o(s)
	}
	s.mu.byID = map[int]*Schema{}
	s.mu.idsBy = map[string]int{}
	return s
}

// SubjectNameStrategy names the subject a topic's keys or values are
// registered under; recordName is the schema's record name (Avro's full
// name, Protobuf's message full name, JSON Schema's title).
type SubjectNameStrategy func(topic string, isKey bool, recordName string) (string, error)

// TopicNameStrategy: <topic>-key or <topic>-value (Confluent's default).
func TopicNameStrategy(topic string, isKey bool, _ string) (string, error) {
	if isKey {
		return topic + "-key", nil
	}
	return topic + "-value", nil
}

// RecordNameStrategy: the record's fully qualified name.
func RecordNameStrategy(_ string, _ bool, recordName string) (string, error) {
	if recordName == "" {
		return "", errors.New("serde: RecordNameStrategy needs a named schema (an Avro record, a Protobuf message, a JSON Schema with a title)")
	}
	return recordName, nil
}

// TopicRecordNameStrategy: <topic>-<record's fully qualified name>.
func TopicRecordNameStrategy(topic string, isKey bool, recordName string) (string, error) {
	name, err := RecordNameStrategy(topic, isKey, recordName)
	if err != nil {
		return "", errors.New(strings.Replace(err.Error(), "RecordNameStrategy", "TopicRecordNameStrategy", 1))
	}
	return topic + "-" + name, nil
}

// StrategyByName maps Confluent's class names (short or
// io.confluent.kafka.serializers.subject.*) to a strategy.
func StrategyByName(name string) (SubjectNameStrategy, error) {
	switch name[strings.LastIndexByte(name, '.')+1:] {
	case "TopicNameStrategy":
		return TopicNameStrategy, nil
	case "RecordNameStrategy":
		return RecordNameStrategy, nil
	case "TopicRecordNameStrategy":
		return TopicRecordNameStrategy, nil
	}
	return nil, fmt.Errorf("serde: unknown subject name strategy %q: want TopicNameStrategy, RecordNameStrategy or TopicRecordNameStrategy", name)
}

// Source is a schema to serialize with, as ForTopic takes it.
type Source struct {
	Type       SchemaType // "" is Avro
	Text       string
	References []sr.SchemaReference
	// Message names the Protobuf message to serialize (full name, or the
	// name of a top-level message); empty takes the file's first message.
	// Unused for the other formats.
	Message string
}

// ForTopic returns an encoder for topic's keys (isKey) or values, as
// Confluent's serializers do: the subject is the strategy's; with
// UseLatestVersion the subject's latest schema is used; else the schema is
// registered (AutoRegister) or looked up, and its ID written.
func (s *Serde) ForTopic(ctx context.Context, topic string, isKey bool, src Source) (*Encoder, error) {
	typ := src.Type
	if typ == "" {
		typ = schema.Avro
	}
	local, err := s.parse(ctx, typ, src.Text, src.References)
	if err != nil {
		return nil, err
	}
	msg, err := local.message(src.Message)
	if err != nil {
		return nil, err
	}
	subject, err := s.strategy(topic, isKey, local.recordName(msg))
	if err != nil {
		return nil, err
	}
	if s.useLatest {
		return s.ForSubject(ctx, subject, -1, src.Message)
	}
	id, err := s.registerOrLookup(ctx, subject, typ, src)
	if err != nil {
		return nil, err
	}
	local.ID = id
	return local.encoder(subject, msg)
}

// ForID returns an encoder for the schema registered with id. message is
// as in Source.
func (s *Serde) ForID(ctx context.Context, id int, message string) (*Encoder, error) {
	sch, err := s.SchemaByID(ctx, id)
	if err != nil {
		return nil, err
	}
	msg, err := sch.message(message)
	if err != nil {
		return nil, err
	}
	return sch.encoder("", msg)
}

// ForSubject returns an encoder for a version of subject (-1: the latest).
func (s *Serde) ForSubject(ctx context.Context, subject string, version int, message string) (*Encoder, error) {
	ss, err := s.cl.SchemaByVersion(ctx, subject, version)
	if err != nil {
		return nil, registryErr(err, fmt.Sprintf("subject %q version %s", subject, versionName(version)))
	}
	sch, err := s.SchemaByID(ctx, ss.ID)
	if err != nil {
		return nil, err
	}
	msg, err := sch.message(message)
	if err != nil {
		return nil, err
	}
	return sch.encoder(subject, msg)
}

func versionName(v int) string {
	if v == -1 {
		return "latest"
	}
	return fmt.Sprint(v)
}

// registerOrLookup finds the ID of src under subject, from the cache or
// the registry.
func (s *Serde) registerOrLookup(ctx context.Context, subject string, typ schema.Type, src Source) (int, error) {
	key := registerKey(subject, typ, src)
	s.mu.Lock()
	id, ok := s.mu.idsBy[key]
	s.mu.Unlock()
	if ok {
		return id, nil
	}
	body := src.RegistrySchema()
	if s.normalize {
		ctx = sr.WithParams(ctx, sr.Normalize)
	}
	if s.autoRegister {
		id, err := s.cl.RegisterSchema(ctx, subject, body, -1, -1)
		if err != nil {
			return 0, registryErr(err, fmt.Sprintf("register the schema under subject %q", subject))
		}
		s.remember(key, id)
		return id, nil
	}
	ss, err := s.cl.LookupSchema(ctx, subject, body)
	if err != nil {
		return 0, registryErr(err, fmt.Sprintf("look the schema up under subject %q (auto-register is off)", subject))
	}
	s.remember(key, ss.ID)
	return ss.ID, nil
}

func (s *Serde) remember(key string, id int) {
	s.mu.Lock()
	s.mu.idsBy[key] = id
	s.mu.Unlock()
}

func registerKey(subject string, typ schema.Type, src Source) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\x00%s\x00%s", subject, typ, src.Text)
	for _, r := range src.References {
		fmt.Fprintf(&b, "\x00%s=%s:%d", r.Name, r.Subject, r.Version)
	}
	return b.String()
}

// RegistrySchema is src as the registry's API takes it, for registering
// or looking it up with an sr.Client.
func (src Source) RegistrySchema() sr.Schema {
	return sr.Schema{Schema: src.Text, Type: srType(src.Type), References: src.References}
}

// srType maps "" to Avro, as Source does.
func srType(t schema.Type) sr.SchemaType {
	switch t {
	case schema.JSON:
		return sr.TypeJSON
	case schema.Protobuf:
		return sr.TypeProtobuf
	}
	return sr.TypeAvro
}

func fromSRType(t sr.SchemaType) schema.Type {
	switch t {
	case sr.TypeJSON:
		return schema.JSON
	case sr.TypeProtobuf:
		return schema.Protobuf
	}
	return schema.Avro
}

// SchemaByID returns the schema registered with id, parsed, from the
// cache or the registry.
func (s *Serde) SchemaByID(ctx context.Context, id int) (*Schema, error) {
	s.mu.Lock()
	sch, ok := s.mu.byID[id]
	s.mu.Unlock()
	if ok {
		return sch, nil
	}
	got, err := s.cl.SchemaByID(ctx, id)
	if err != nil {
		return nil, registryErr(err, fmt.Sprintf("schema id %d", id))
	}
	sch, err = s.parse(ctx, fromSRType(got.Type), got.Schema, got.References)
	if err != nil {
		return nil, fmt.Errorf("schema id %d: %w", id, err)
	}
	sch.ID = id
	s.mu.Lock()
	s.mu.byID[id] = sch
	s.mu.Unlock()
	return sch, nil
}

// parse parses text with its references fetched from the registry.
func (s *Serde) parse(ctx context.Context, typ schema.Type, text string, refs []sr.SchemaReference) (*Schema, error) {
	resolved, err := s.resolveRefs(ctx, refs, map[string]bool{}, nil)
	if err != nil {
		return nil, err
	}
	parsed, err := schema.Parse(typ, text, resolved)
	if err != nil {
		return nil, fmt.Errorf("serde: %w", err)
	}
	return newSchema(typ, text, refs, parsed)
}

// resolveRefs fetches refs and theirs, each once, dependencies first, as
// schema.Parse wants them.
func (s *Serde) resolveRefs(ctx context.Context, refs []sr.SchemaReference, seen map[string]bool, out []schema.Ref) ([]schema.Ref, error) {
	for _, r := range refs {
		key := fmt.Sprintf("%s\x00%d", r.Subject, r.Version)
		if seen[key] {
			continue
		}
		seen[key] = true
		ss, err := s.cl.SchemaByVersion(ctx, r.Subject, r.Version)
		if err != nil {
			return nil, registryErr(err, fmt.Sprintf("reference %q (subject %q version %d)", r.Name, r.Subject, r.Version))
		}
		if out, err = s.resolveRefs(ctx, ss.References, seen, out); err != nil {
			return nil, err
		}
		out = append(out, schema.Ref{Name: r.Name, Subject: r.Subject, Version: r.Version, Type: fromSRType(ss.Type), Schema: ss.Schema.Schema})
	}
	return out, nil
}

// registryErr says what was asked when the registry refused, wrapping
// ErrSchemaNotFound for its not-found codes.
func registryErr(err error, what string) error {
	var re *sr.ResponseError
	if errors.As(err, &re) {
		switch re.ErrorCode {
		case 40401, 40402, 40403:
			return fmt.Errorf("%w: %s: %s (error code %d)", ErrSchemaNotFound, what, re.Message, re.ErrorCode)
		}
		return fmt.Errorf("serde: %s: the registry answered %d: %s", what, re.ErrorCode, re.Message)
	}
	return fmt.Errorf("serde: %s: %w", what, err)
}

// Encoder serializes values with one registered schema.
type Encoder struct {
	schema  *Schema
	subject string
	prefix  []byte // magic byte, ID, message indexes
	msg     messageDescriptor
}

// Schema is the schema the encoder writes with.
func (e *Encoder) Schema() *Schema { return e.schema }

// Subject is the subject the schema was found under ("" for ForID).
func (e *Encoder) Subject() string { return e.subject }

// Encode serializes a Go value: for Avro any value hamba/avro marshals
// with the schema, for JSON Schema any value encoding/json marshals (then
// validated), for Protobuf a proto.Message of the schema's message.
func (e *Encoder) Encode(v any) ([]byte, error) {
	body, err := e.schema.encode(e.msg, v)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidValue, err)
	}
	return append(append([]byte{}, e.prefix...), body...), nil
}

// EncodeJSON serializes a value given as JSON text: Avro's JSON encoding
// for Avro, the document itself for JSON Schema, Protobuf's JSON mapping
// (protojson) for Protobuf.
func (e *Encoder) EncodeJSON(text []byte) ([]byte, error) {
	body, err := e.schema.encodeJSON(e.msg, text)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidValue, err)
	}
	return append(append([]byte{}, e.prefix...), body...), nil
}

// DecodeJSON deserializes a payload in the wire format to JSON text (the
// forms EncodeJSON reads), and returns the writer's schema.
func (s *Serde) DecodeJSON(ctx context.Context, payload []byte) ([]byte, *Schema, error) {
	id, body, err := ParseHeader(payload)
	if err != nil {
		return nil, nil, err
	}
	sch, err := s.SchemaByID(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	out, err := sch.decodeJSON(body, s.validateOnDecode)
	if err != nil {
		return nil, sch, fmt.Errorf("schema id %d: %w", id, err)
	}
	return out, sch, nil
}

// Decode deserializes a payload into a Go value: for Avro as hamba/avro
// unmarshals, for JSON Schema as encoding/json does, for Protobuf into a
// proto.Message. It returns the writer's schema.
func (s *Serde) Decode(ctx context.Context, payload []byte, into any) (*Schema, error) {
	id, body, err := ParseHeader(payload)
	if err != nil {
		return nil, err
	}
	sch, err := s.SchemaByID(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := sch.decode(body, into, s.validateOnDecode); err != nil {
		return sch, fmt.Errorf("schema id %d: %w", id, err)
	}
	return sch, nil
}

// SchemaType names a schema's format as the registry does; "" is Avro.
type SchemaType = schema.Type

// The formats.
const (
	Avro     SchemaType = schema.Avro
	JSON     SchemaType = schema.JSON
	Protobuf SchemaType = schema.Protobuf
)
