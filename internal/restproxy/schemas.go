package restproxy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/samsa-io/samsa/internal/schemaregistry/schema"
	"github.com/samsa-io/samsa/pkg/serde"
)

// The schema formats (v2's avro, jsonschema and protobuf, v3's AVRO,
// JSONSCHEMA and PROTOBUF) go through a Schema Registry, as Confluent's
// REST Proxy's do through schema.registry.url: pkg/serde writes and reads
// Confluent's wire format and registers or looks schemas up with
// franz-go's sr client.

// Confluent's codes of the schema formats (kafka-rest's Errors.java):
// all 422, as RestConstraintViolationException answers.
const (
	codeKeySchemaMissing   = 42201
	codeValueSchemaMissing = 42202
	codeInvalidSchema      = 42205
	codeInvalidPayload     = 42206
	codeSerialization      = 42207
)

func errUnprocessable(code int, msg string) *Error {
	return &Error{http.StatusUnprocessableEntity, code, msg}
}

// errNoRegistry is Confluent's answer to a schema (id or text) when no
// registry is configured (SchemaManagerThrowing).
func errNoRegistry() *Error {
	return errUnprocessable(codeInvalidPayload, "Payload error. Schema Registry must be configured when using schemas.")
}

// errNoRegistrySerializer is Confluent's answer to data of a schema format
// without a schema when no registry is configured
// (SchemaRecordSerializerThrowing).
func errNoRegistrySerializer() *Error {
	return errUnprocessable(codeSerialization, "Error serializing message. Schema Registry not defined, no Schema Registry client available to serialize message.")
}

func errSchemaMissing(isKey bool) *Error {
	if isKey {
		return errUnprocessable(codeKeySchemaMissing, "Request includes keys but does not include key schema")
	}
	return errUnprocessable(codeValueSchemaMissing, "Request includes values but does not include value schema")
}

// registry is the proxy's way to the Schema Registry: one serde per
// subject name strategy (the strategy is a serde's setting), sharing one
// registry client.
type registry struct {
	cl         *sr.Client
	byStrategy map[string]*serde.Serde // TopicNameStrategy, RecordNameStrategy, TopicRecordNameStrategy
}

// newRegistry reaches the registry at urls (comma-separated), with HTTP
// basic auth when user is set. https:// uses the system's CAs.
func newRegistry(urls, user, password string) (*registry, error) {
	var list []string
	for _, u := range strings.Split(urls, ",") {
		if u = strings.TrimSpace(u); u == "" {
			continue
		}
		parsed, err := url.Parse(u)
		if err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
			return nil, fmt.Errorf("restproxy: schema registry url %q: want http://host:port or https://host:port", u)
		}
		if parsed.User != nil {
			return nil, fmt.Errorf("restproxy: schema registry url %q: give the user and password as their own settings, not in the URL", parsed.Redacted())
		}
		list = append(list, u)
	}
	if len(list) == 0 {
		return nil, errors.New("restproxy: schema registry url is empty")
	}
	if user == "" && password != "" {
		return nil, errors.New("restproxy: a schema registry password needs a user")
	}
	opts := []sr.ClientOpt{sr.URLs(list...), sr.UserAgent("samsa-rest")}
	if user != "" {
		opts = append(opts, sr.BasicAuth(user, password))
	}
	cl, err := sr.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("restproxy: schema registry client: %w", err)
	}
	r := &registry{cl: cl, byStrategy: map[string]*serde.Serde{}}
	for _, name := range []string{"TopicNameStrategy", "RecordNameStrategy", "TopicRecordNameStrategy"} {
		st, _ := serde.StrategyByName(name)
		// Confluent's REST Proxy registers an inline schema that is not
		// registered yet, and serializes JSON Schema values validated.
		r.byStrategy[name] = serde.New(cl, serde.AutoRegister(true), serde.WithSubjectNameStrategy(st))
	}
	return r, nil
}

// topicSerde is the serde of the default strategy, TopicNameStrategy: v2
// names subjects by it only.
func (r *registry) topicSerde() *serde.Serde { return r.byStrategy["TopicNameStrategy"] }

// schemaType maps a format to the registry's schema type.
func schemaType(f embeddedFormat) serde.SchemaType {
	switch f {
	case formatJSONSchema:
		return serde.JSON
	case formatProtobuf:
		return serde.Protobuf
	}
	return serde.Avro
}

// isSchemaFormat says whether f needs the registry.
func isSchemaFormat(f embeddedFormat) bool {
	return f == formatAvro || f == formatJSONSchema || f == formatProtobuf
}

// registryError maps a failure to find or register a schema as
// Confluent's SchemaManagerImpl answers it: 422 42207 (its
// messageSerializationException), or 403 40301 when the registry
// refused the proxy's identity. A schema that does not parse is
// checkSchema's.
func registryError(err error, what string) *Error {
	var re *sr.ResponseError
	if errors.As(err, &re) && (re.StatusCode == http.StatusForbidden || re.ErrorCode == codeAuthorization) {
		return &Error{http.StatusForbidden, codeAuthorization, what + ": " + err.Error()}
	}
	return errUnprocessable(codeSerialization, "Error serializing message. "+what+"\n"+err.Error())
}

// checkSchema parses an inline schema before it is sent to the registry:
// one that does not parse is Confluent's 422 42205 (its schema provider
// finds no schema in the text), not the registry's refusal. A schema
// with references is not taken inline (Confluent's neither).
func checkSchema(f embeddedFormat, text string) *Error {
	if _, err := schema.Parse(schemaType(f), text, nil); err != nil {
		return errUnprocessable(codeInvalidSchema, fmt.Sprintf("Invalid schema: Error when parsing raw schema. format = %s, schema = %s: %v", strings.ToUpper(string(f)), text, err))
	}
	return nil
}

// valueMismatch is a value that does not fit its schema: Confluent's
// SchemaRecordSerializerImpl answers 400 with the converter's message.
func valueMismatch(err error) *Error {
	return errBadRequest("Bad Request: " + strings.TrimPrefix(err.Error(), serde.ErrInvalidValue.Error()+": "))
}

// v3Strategies maps the spec's subject_name_strategy to serde's names.
var v3Strategies = map[string]string{
	"TOPIC_NAME":        "TopicNameStrategy",
	"RECORD_NAME":       "RecordNameStrategy",
	"TOPIC_RECORD_NAME": "TopicRecordNameStrategy",
}

// v3Formats maps a v3 type to its format.
var v3Formats = map[string]embeddedFormat{"AVRO": formatAvro, "JSONSCHEMA": formatJSONSchema, "PROTOBUF": formatProtobuf}

// v3Schemas serializes a v3 key or value through the registry as
// Confluent's SchemaManagerImpl picks its schema: schema_id, else
// schema_version of the subject, else the inline schema (registered under
// the subject when new), else the subject's latest version. The subject
// is the request's, or its strategy's (TopicNameStrategy by default).
func (p *Proxy) v3Schemas(req *http.Request, topic string) schemaSerializer {
	return func(isKey bool, d *produceData) ([]byte, *produceDataSize, *Error) {
		if p.registry == nil {
			return nil, nil, errNoRegistry()
		}
		ctx, cancel := p.opContext(req)
		defer cancel()
		enc, e := p.v3Encoder(ctx, topic, isKey, d)
		if e != nil {
			return nil, nil, e
		}
		size := &produceDataSize{Type: v3TypeName(enc.Schema().Type), SchemaID: schemaID(enc)}
		if sub := enc.Subject(); sub != "" {
			size.Subject = &sub
		} else if d.Subject != nil {
			size.Subject = d.Subject
		}
		if len(d.Data) == 0 || string(d.Data) == "null" {
			return nil, size, nil
		}
		b, err := enc.EncodeJSON(d.Data)
		if err != nil {
			return nil, nil, valueMismatch(err)
		}
		size.Size = len(b)
		return b, size, nil
	}
}

func v3TypeName(t serde.SchemaType) string {
	if t == serde.JSON {
		return "JSONSCHEMA"
	}
	return typeName(t)
}

func (p *Proxy) v3Encoder(ctx context.Context, topic string, isKey bool, d *produceData) (*serde.Encoder, *Error) {
	typ := strings.ToUpper(d.Type)
	f, known := v3Formats[typ]
	if typ != "" && !known {
		return nil, errBadRequest(fmt.Sprintf("Bad Request: unknown type %s", d.Type))
	}
	strategy := "TopicNameStrategy"
	if d.SubjectNameStrategy != nil {
		if strategy, known = v3Strategies[strings.ToUpper(*d.SubjectNameStrategy)]; !known {
			return nil, errBadRequest(fmt.Sprintf("Bad Request: unknown subject_name_strategy %s: want TOPIC_NAME, RECORD_NAME or TOPIC_RECORD_NAME", *d.SubjectNameStrategy))
		}
	}
	s := p.registry.byStrategy[strategy]
	var enc *serde.Encoder
	var err error
	var what string
	switch {
	case d.SchemaID != nil:
		what = fmt.Sprintf("Error when fetching schema by id. schemaId = %d", *d.SchemaID)
		enc, err = s.ForID(ctx, *d.SchemaID, "")
	case d.Schema != nil && d.SchemaVersion == nil:
		if typ == "" {
			return nil, errBadRequest("Bad Request: a schema needs its type (AVRO, JSONSCHEMA or PROTOBUF)")
		}
		if e := checkSchema(f, *d.Schema); e != nil {
			return nil, e
		}
		what = fmt.Sprintf("Error when registering schema. format = %s, schema = %s", typ, *d.Schema)
		if d.Subject != nil {
			// An explicit subject is a strategy that answers it.
			subject := *d.Subject
			s = serde.New(p.registry.cl, serde.WithSubjectNameStrategy(func(string, bool, string) (string, error) { return subject, nil }))
		}
		enc, err = s.ForTopic(ctx, topic, isKey, serde.Source{Type: schemaType(f), Text: *d.Schema})
	default:
		subject, e := v3Subject(topic, isKey, d, strategy)
		if e != nil {
			return nil, e
		}
		version := -1
		what = fmt.Sprintf("Error when fetching latest schema version. subject = %s", subject)
		if d.SchemaVersion != nil {
			version = *d.SchemaVersion
			what = fmt.Sprintf("Error when fetching schema by version. subject = %s, version = %d", subject, version)
		}
		enc, err = s.ForSubject(ctx, subject, version, "")
	}
	if err != nil {
		return nil, registryError(err, what)
	}
	if typ != "" && enc.Schema().Type != schemaType(f) {
		return nil, errBadRequest(fmt.Sprintf("Bad Request: the schema (id %d) is %s, not %s", enc.Schema().ID, v3TypeName(enc.Schema().Type), typ))
	}
	return enc, nil
}

// v3Subject is the subject of a request without a schema: its own, or
// its strategy's, which can name one only from the topic (Confluent's
// getSchemaSubjectUnsafe).
func v3Subject(topic string, isKey bool, d *produceData, strategy string) (string, *Error) {
	if d.Subject != nil {
		return *d.Subject, nil
	}
	if strategy != "TopicNameStrategy" {
		return "", errBadRequest(fmt.Sprintf("Bad Request: Unsupported argument: Cannot use schema_subject_strategy=%s without schema_id or schema.", *d.SubjectNameStrategy))
	}
	subject, _ := serde.TopicNameStrategy(topic, isKey, "")
	return subject, nil
}
