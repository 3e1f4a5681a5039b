package convert

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/samsa-io/samsa/connect"
	"github.com/samsa-io/samsa/pkg/serde"
)

// Class names of Confluent's Schema Registry converters.
const (
	AvroConverterClass       = "io.confluent.connect.avro.AvroConverter"
	JSONSchemaConverterClass = "io.confluent.connect.json.JsonSchemaConverter"
	ProtobufConverterClass   = "io.confluent.connect.protobuf.ProtobufConverter"
)

// The registry converters' configs, with Confluent's names.
const (
	SchemaRegistryURLConfig        = "schema.registry.url"
	AutoRegisterSchemasConfig      = "auto.register.schemas"
	UseLatestVersionConfig         = "use.latest.version"
	NormalizeSchemasConfig         = "normalize.schemas"
	KeySubjectNameStrategyConfig   = "key.subject.name.strategy"
	ValueSubjectNameStrategyConfig = "value.subject.name.strategy"
	BasicAuthCredentialsSource     = "basic.auth.credentials.source"
	BasicAuthUserInfoConfig        = "basic.auth.user.info"
	// SchemaRegistryUserInfoConfig is the newer name of basic.auth.user.info.
	SchemaRegistryUserInfoConfig = "schema.registry.basic.auth.user.info"
	// RequestTimeoutConfig bounds each registry request (Samsa's own: a
	// converter call has no context of its own).
	RequestTimeoutConfig = "schema.registry.request.timeout.ms"
)

const topicNameStrategyClass = "io.confluent.kafka.serializers.subject.TopicNameStrategy"

// RegistryConverterConfigDef is the ConfigDef of AvroConverter,
// JsonSchemaConverter and ProtobufConverter.
func RegistryConverterConfigDef() *connect.ConfigDef {
	strategy := connect.ValidatorFunc(func(_ string, v any) error {
		_, err := serde.StrategyByName(v.(string))
		return err
	})
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: SchemaRegistryURLConfig, Type: connect.TypeList, Default: connect.NoDefault, Importance: connect.High,
			Documentation: "Comma-separated list of URLs for Schema Registry instances that can be used to register or look up schemas."}).
		Define(connect.ConfigKey{Name: AutoRegisterSchemasConfig, Type: connect.TypeBoolean, Default: true, Importance: connect.Medium,
			Documentation: "Specify if the Serializer should attempt to register the Schema with Schema Registry"}).
		Define(connect.ConfigKey{Name: UseLatestVersionConfig, Type: connect.TypeBoolean, Default: false, Importance: connect.Low,
			Documentation: "Specify if the Serializer should use the latest subject version for serialization"}).
		Define(connect.ConfigKey{Name: NormalizeSchemasConfig, Type: connect.TypeBoolean, Default: false, Importance: connect.Low,
			Documentation: "Whether to normalize schemas, which generally ignores ordering when it is not significant"}).
		Define(connect.ConfigKey{Name: KeySubjectNameStrategyConfig, Type: connect.TypeClass, Default: topicNameStrategyClass, Importance: connect.Medium,
			Validator: strategy, Documentation: "Determines how to construct the subject name under which the key schema is registered with the schema registry."}).
		Define(connect.ConfigKey{Name: ValueSubjectNameStrategyConfig, Type: connect.TypeClass, Default: topicNameStrategyClass, Importance: connect.Medium,
			Validator: strategy, Documentation: "Determines how to construct the subject name under which the value schema is registered with the schema registry."}).
		Define(connect.ConfigKey{Name: BasicAuthCredentialsSource, Type: connect.TypeString, Default: "URL", Importance: connect.Medium,
			Validator:     caseInsensitiveOneOf{"URL", "USER_INFO"},
			Documentation: "Specify how to pick the credentials for Basic Auth header. The supported values are URL and USER_INFO"}).
		Define(connect.ConfigKey{Name: BasicAuthUserInfoConfig, Type: connect.TypePassword, Default: connect.Password(""), Importance: connect.Medium,
			Documentation: "Specify the user info for Basic Auth in the form of {username}:{password}"}).
		Define(connect.ConfigKey{Name: SchemaRegistryUserInfoConfig, Type: connect.TypePassword, Default: connect.Password(""), Importance: connect.Medium,
			Documentation: "Specify the user info for Basic Auth in the form of {username}:{password}"}).
		Define(connect.ConfigKey{Name: RequestTimeoutConfig, Type: connect.TypeInt, Default: int32(30000), Importance: connect.Low,
			Validator: connect.AtLeast(1), Documentation: "How long one request to the registry may take, in milliseconds."})
}

// format is what differs between Avro, JSON Schema and Protobuf: the
// schema a Connect schema registers as, how a value is written under the
// schema the serializer uses, and how a record is read back.
type format interface {
	class() string
	schemaType() serde.SchemaType
	// fromConnectSchema is the schema text to register for s, and for
	// Protobuf the message to write.
	fromConnectSchema(s *connect.Schema) (text, message string, err error)
	// encode writes v (of s) under enc's schema, the payload in the wire
	// format.
	encode(enc *serde.Encoder, s *connect.Schema, v any) ([]byte, error)
	// decode reads a payload in the wire format.
	decode(ctx context.Context, sd *serde.Serde, payload []byte) (*connect.Schema, any, error)
}

// RegistryConverter is one of Confluent's Schema Registry converters
// (AvroConverter, JsonSchemaConverter, ProtobufConverter): a record is
// written in Confluent's wire format with its schema registered (or looked
// up) in the registry under the subject the strategy names, and read back
// with the schema its ID names. Mapping a Connect schema to the format's
// schema follows Confluent's AvroData (and, for the common subset,
// JsonSchemaData and ProtobufData); see docs/connect/converters.md.
type RegistryConverter struct {
	format  format
	isKey   bool
	timeout time.Duration
	serde   *serde.Serde

	// schemas caches the registered text of each Connect schema; encoders
	// the encoder of each topic and schema (the registry's ID found once).
	schemas  *lru[*connect.Schema, registered]
	encoders *lru[encoderKey, *serde.Encoder]
}

type registered struct{ text, message string }

type encoderKey struct {
	topic  string
	schema *connect.Schema
}

// registryCacheSize bounds the converters' caches of schemas and encoders.
const registryCacheSize = 1000

var _ connect.Converter = (*RegistryConverter)(nil)

func newRegistryConverter(f format) *RegistryConverter { return &RegistryConverter{format: f} }

// Configure reads the registry's URL, credentials and serializer configs.
func (c *RegistryConverter) Configure(props map[string]string, isKey bool) error {
	cfg, err := parseConfig(c.format.class(), RegistryConverterConfigDef(), props)
	if err != nil {
		return err
	}
	opts, err := clientOpts(cfg)
	if err != nil {
		return err
	}
	cl, err := sr.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrConfig, SchemaRegistryURLConfig, err)
	}
	strategyName := cfg.String(ValueSubjectNameStrategyConfig)
	if isKey {
		strategyName = cfg.String(KeySubjectNameStrategyConfig)
	}
	strategy, err := serde.StrategyByName(strategyName)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	c.isKey = isKey
	c.timeout = time.Duration(cfg.Int(RequestTimeoutConfig)) * time.Millisecond
	c.serde = serde.New(cl, serde.AutoRegister(cfg.Bool(AutoRegisterSchemasConfig)), serde.UseLatestVersion(cfg.Bool(UseLatestVersionConfig)),
		serde.Normalize(cfg.Bool(NormalizeSchemasConfig)), serde.WithSubjectNameStrategy(strategy))
	c.schemas = newLRU[*connect.Schema, registered](registryCacheSize)
	c.encoders = newLRU[encoderKey, *serde.Encoder](registryCacheSize)
	return nil
}

// clientOpts are the sr client's URLs and basic-auth credentials: from
// the user info config (USER_INFO) or from the URLs' user info (URL).
func clientOpts(cfg connect.Config) ([]sr.ClientOpt, error) {
	urls := cfg.List(SchemaRegistryURLConfig)
	if len(urls) == 0 || urls[0] == "" {
		return nil, fmt.Errorf("%w: %s must name at least one registry URL", ErrConfig, SchemaRegistryURLConfig)
	}
	clean := make([]string, len(urls))
	var urlUser *url.Userinfo
	for i, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("%w: Invalid value %s for configuration %s: not an http or https URL", ErrConfig, raw, SchemaRegistryURLConfig)
		}
		if u.User != nil {
			urlUser = u.User
		}
		u.User = nil
		clean[i] = u.String()
	}
	opts := []sr.ClientOpt{sr.URLs(clean...), sr.HTTPClient(&http.Client{})}
	userInfo := cfg.Password(SchemaRegistryUserInfoConfig)
	if userInfo == "" {
		userInfo = cfg.Password(BasicAuthUserInfoConfig)
	}
	switch strings.ToUpper(cfg.String(BasicAuthCredentialsSource)) {
	case "USER_INFO":
		user, pass, ok := strings.Cut(userInfo, ":")
		if !ok || user == "" {
			return nil, fmt.Errorf("%w: %s=USER_INFO needs %s (or %s) as {username}:{password}", ErrConfig, BasicAuthCredentialsSource, BasicAuthUserInfoConfig, SchemaRegistryUserInfoConfig)
		}
		opts = append(opts, sr.BasicAuth(user, pass))
	default: // URL
		if userInfo != "" {
			return nil, fmt.Errorf("%w: %s is set but %s is URL: set it to USER_INFO to use it", ErrConfig, BasicAuthUserInfoConfig, BasicAuthCredentialsSource)
		}
		if urlUser != nil {
			pass, _ := urlUser.Password()
			opts = append(opts, sr.BasicAuth(urlUser.Username(), pass))
		}
	}
	return opts, nil
}

func (c *RegistryConverter) context() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), c.timeout)
}

// FromConnectData registers (or looks up) the schema of the record's
// Connect schema and writes the value in the wire format; a null value is
// null (a tombstone), as Confluent's serializers write it.
func (c *RegistryConverter) FromConnectData(topic string, _ connect.Headers, schema *connect.Schema, value any) ([]byte, error) {
	if value == nil {
		return nil, nil
	}
	if c.serde == nil {
		return nil, errNotConfigured(c.format.class())
	}
	if schema == nil {
		return nil, dataErrorf("%s needs a schema: schemaless values are not supported (use JsonConverter with schemas.enable=false)", c.format.class())
	}
	enc, err := c.encoder(topic, schema)
	if err != nil {
		return nil, fmt.Errorf("%w: Failed to serialize data of topic %s to %s: %w", connect.ErrData, topic, c.format.schemaType(), err)
	}
	out, err := c.format.encode(enc, schema, value)
	if err != nil {
		return nil, fmt.Errorf("%w: Failed to serialize data of topic %s to %s: %w", connect.ErrData, topic, c.format.schemaType(), err)
	}
	return out, nil
}

func (c *RegistryConverter) encoder(topic string, schema *connect.Schema) (*serde.Encoder, error) {
	key := encoderKey{topic, schema}
	if enc, ok := c.encoders.get(key); ok {
		return enc, nil
	}
	reg, ok := c.schemas.get(schema)
	if !ok {
		text, message, err := c.format.fromConnectSchema(schema)
		if err != nil {
			return nil, err
		}
		reg = registered{text, message}
		c.schemas.put(schema, reg)
	}
	ctx, cancel := c.context()
	defer cancel()
	enc, err := c.serde.ForTopic(ctx, topic, c.isKey, serde.Source{Type: c.format.schemaType(), Text: reg.text, Message: reg.message})
	if err != nil {
		return nil, err
	}
	c.encoders.put(key, enc)
	return enc, nil
}

// ToConnectData reads a record in the wire format with the schema its ID
// names; nil or empty data is a null value with no schema.
func (c *RegistryConverter) ToConnectData(topic string, _ connect.Headers, data []byte) (*connect.Schema, any, error) {
	if len(data) == 0 {
		return nil, nil, nil
	}
	if c.serde == nil {
		return nil, nil, errNotConfigured(c.format.class())
	}
	ctx, cancel := c.context()
	defer cancel()
	s, v, err := c.format.decode(ctx, c.serde, data)
	if err != nil {
		if errors.Is(err, connect.ErrData) {
			return nil, nil, fmt.Errorf("Failed to deserialize data for topic %s to %s: %w", topic, c.format.schemaType(), err)
		}
		return nil, nil, fmt.Errorf("%w: Failed to deserialize data for topic %s to %s: %w", connect.ErrData, topic, c.format.schemaType(), err)
	}
	return s, v, nil
}

// decodedCache keeps, per schema ID, what a format derived from the
// registry's schema (its Connect schema), so that records of one schema
// share one *connect.Schema.
type decodedCache[V any] struct{ *lru[int, V] }

func newDecodedCache[V any]() decodedCache[V] {
	return decodedCache[V]{newLRU[int, V](registryCacheSize)}
}

func errNotConfigured(class string) error {
	return fmt.Errorf("%w: %s is used before Configure", ErrConfig, class)
}
