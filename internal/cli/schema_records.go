package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/pkg/serde"
)

// Schema Registry serialization for produce and consume (pkg/serde):
// produce encodes each JSON line with a schema, consume decodes records in
// Confluent's wire format back to JSON.

// schemaSpecKind says where --key-schema or --value-schema takes its
// schema from.
type schemaSpecKind int

const (
	specFile    schemaSpecKind = iota // a schema file, registered or looked up by the subject name strategy
	specID                            // id:N, a registered schema
	specSubject                       // subject:S[:version], a subject's version (latest by default)
)

type schemaSpec struct {
	kind    schemaSpecKind
	path    string // specFile
	id      int    // specID
	subject string // specSubject
	version int    // specSubject; -1 is latest
}

// parseSchemaSpec reads a --key-schema or --value-schema: id:N,
// subject:S[:version], or a file path.
func parseSchemaSpec(flag, s string) (schemaSpec, error) {
	switch {
	case strings.HasPrefix(s, "id:"):
		id, err := parsePositive(s[3:])
		if err != nil {
			return schemaSpec{}, fmt.Errorf("invalid %s %q: id:N needs a positive schema id", flag, s)
		}
		return schemaSpec{kind: specID, id: id}, nil
	case strings.HasPrefix(s, "subject:"):
		rest := s[len("subject:"):]
		sp := schemaSpec{kind: specSubject, subject: rest, version: -1}
		if subj, v, ok := cutLast(rest, ":"); ok {
			if version, err := parseVersion(v); err == nil {
				sp.subject, sp.version = subj, version
			}
		}
		if sp.subject == "" {
			return schemaSpec{}, fmt.Errorf("invalid %s %q: want subject:NAME or subject:NAME:VERSION", flag, s)
		}
		return sp, nil
	case s == "":
		return schemaSpec{}, fmt.Errorf("%s is empty", flag)
	}
	return schemaSpec{kind: specFile, path: s}, nil
}

// partFlags are one record part's (key or value) schema flags.
type partFlags struct {
	name    string // "key" or "value"
	spec    string
	typ     string
	message string
	format  string // consume: raw or schema
}

func (p *partFlags) registerSchema(f *pflag.FlagSet, produce bool) {
	use := "decode the %s with this schema only (a record written with another schema ID is an error): " +
		"a schema file (looked up under its subject, <topic>-%s by default), "
	if produce {
		use = "encode each line's %s (JSON) with this schema: " +
			"a schema file (registered under its subject, <topic>-%s by default, unless --auto-register=false), "
	}
	f.StringVar(&p.spec, p.name+"-schema", "", fmt.Sprintf(use, p.name, p.name)+
		"id:N (a registered schema) or subject:NAME[:VERSION] (default the latest)")
	f.StringVar(&p.typ, p.name+"-schema-type", "", "type of the --"+p.name+"-schema file: AVRO, JSON or PROTOBUF (default from its extension: .json JSON, .proto PROTOBUF, else AVRO)")
	f.StringVar(&p.message, p.name+"-schema-message", "", "Protobuf: the message of the --"+p.name+"-schema to use (default the file's first)")
}

// serdeFlags are the registry and serializer flags of produce and consume.
type serdeFlags struct {
	reg          registryFlags
	key, value   partFlags
	autoRegister bool
	normalize    bool
	strategy     string
	validate     bool // consume: validate JSON Schema payloads
}

func (s *serdeFlags) register(f *pflag.FlagSet, produce bool) {
	s.key.name, s.value.name = "key", "value"
	s.reg.register(f)
	s.value.registerSchema(f, produce)
	s.key.registerSchema(f, produce)
	f.StringVar(&s.strategy, "subject-name-strategy", "TopicNameStrategy",
		"how a schema file's subject is named: TopicNameStrategy (<topic>-key, <topic>-value), RecordNameStrategy or TopicRecordNameStrategy")
	if produce {
		f.BoolVar(&s.autoRegister, "auto-register", true, "register a --key-schema or --value-schema file under its subject if it is not there (Confluent's auto.register.schemas)")
		f.BoolVar(&s.normalize, "normalize", false, "have the registry normalize a schema file when registering or looking it up")
		return
	}
	for _, p := range []*partFlags{&s.value, &s.key} {
		f.StringVar(&p.format, p.name+"-format", "raw",
			"how to print the "+p.name+": raw (its bytes) or schema (Confluent's wire format decoded with the registry's schema of the record's ID, printed as JSON; implied by --"+p.name+"-schema)")
	}
	f.BoolVar(&s.validate, "validate", false, "validate JSON Schema payloads against their schema when decoding")
}

// used reports whether any flag asks for the registry.
func (s *serdeFlags) used() bool {
	return s.key.spec != "" || s.value.spec != "" || s.key.format == "schema" || s.value.format == "schema"
}

// check refuses the schema flags that would otherwise be ignored.
func (s *serdeFlags) check(changed func(string) bool) error {
	for _, p := range []*partFlags{&s.key, &s.value} {
		if p.format != "" && p.format != "raw" && p.format != "schema" {
			return fmt.Errorf("invalid --%s-format %q: want raw or schema", p.name, p.format)
		}
		if p.spec != "" && p.format == "raw" && changed(p.name+"-format") {
			return fmt.Errorf("--%s-format raw contradicts --%s-schema, which decodes with a schema", p.name, p.name)
		}
		if p.spec == "" && (p.typ != "" || p.message != "") {
			return fmt.Errorf("--%s-schema-type and --%s-schema-message need --%s-schema", p.name, p.name, p.name)
		}
	}
	if !s.used() {
		for _, name := range []string{"registry-url", "registry-user", "registry-password", "subject-name-strategy", "auto-register", "normalize", "validate"} {
			if changed(name) {
				return fmt.Errorf("--%s applies only when keys or values use a schema (--key-schema, --value-schema, --key-format schema, --value-format schema)", name)
			}
		}
	}
	return nil
}

func (s *serdeFlags) serde(timeout time.Duration) (*serde.Serde, error) {
	cl, err := s.reg.client(timeout)
	if err != nil {
		return nil, err
	}
	strategy, err := serde.StrategyByName(s.strategy)
	if err != nil {
		return nil, fmt.Errorf("invalid --subject-name-strategy %q: want TopicNameStrategy, RecordNameStrategy or TopicRecordNameStrategy", s.strategy)
	}
	return serde.New(cl, serde.AutoRegister(s.autoRegister), serde.Normalize(s.normalize),
		serde.ValidateOnDecode(s.validate), serde.WithSubjectNameStrategy(strategy)), nil
}

// encoder builds the encoder of one part for produce; nil when the part
// has no schema.
func (s *serdeFlags) encoder(ctx context.Context, sd *serde.Serde, topic string, p *partFlags) (*serde.Encoder, error) {
	if p.spec == "" {
		return nil, nil
	}
	sp, err := parseSchemaSpec("--"+p.name+"-schema", p.spec)
	if err != nil {
		return nil, err
	}
	var enc *serde.Encoder
	switch sp.kind {
	case specID:
		if p.typ != "" {
			return nil, fmt.Errorf("--%s-schema-type applies to a schema file, not id:N (the registry knows its type)", p.name)
		}
		enc, err = sd.ForID(ctx, sp.id, p.message)
	case specSubject:
		if p.typ != "" {
			return nil, fmt.Errorf("--%s-schema-type applies to a schema file, not subject:NAME (the registry knows its type)", p.name)
		}
		enc, err = sd.ForSubject(ctx, sp.subject, sp.version, p.message)
	default:
		var src serde.Source
		if src, err = fileSource(sp.path, p); err == nil {
			enc, err = sd.ForTopic(ctx, topic, p.name == "key", src)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("--%s-schema: %w", p.name, s.registryErr(err))
	}
	return enc, nil
}

func fileSource(path string, p *partFlags) (serde.Source, error) {
	text, err := readSchemaFile(path)
	if err != nil {
		return serde.Source{}, err
	}
	typ, err := parseSchemaType(p.typ, path)
	if err != nil {
		return serde.Source{}, err
	}
	return serde.Source{Type: typ, Text: text, Message: p.message}, nil
}

// registryErr says "cannot reach the registry" plainly; serde's own
// errors are already sentences.
func (s *serdeFlags) registryErr(err error) error {
	var op *net.OpError
	if (errors.As(err, &op) && op.Op == "dial") || errors.Is(err, context.DeadlineExceeded) {
		return s.reg.err(err)
	}
	return err
}

// recordDecoder decodes consumed keys and values in the wire format.
type recordDecoder struct {
	sd         *serde.Serde
	flags      *serdeFlags
	keyID      int // 0: any ID
	valueID    int
	key, value bool // decode this part
}

// newRecordDecoder resolves consume's schema flags; nil when nothing is
// decoded.
func (s *serdeFlags) decoder(ctx context.Context, topic string, timeout time.Duration) (*recordDecoder, error) {
	if !s.used() {
		return nil, nil
	}
	s.autoRegister = false // consume never registers: a file is looked up
	sd, err := s.serde(timeout)
	if err != nil {
		return nil, err
	}
	d := &recordDecoder{sd: sd, flags: s, key: s.key.spec != "" || s.key.format == "schema",
		value: s.value.spec != "" || s.value.format == "schema"}
	for _, p := range []*partFlags{&s.key, &s.value} {
		enc, err := s.encoder(ctx, sd, topic, p)
		if err != nil || enc == nil {
			if err != nil {
				return nil, err
			}
			continue
		}
		if p.name == "key" {
			d.keyID = enc.Schema().ID
		} else {
			d.valueID = enc.Schema().ID
		}
	}
	return d, nil
}

// decodedPart is a key or value decoded to JSON, with its schema ID.
type decodedPart struct {
	json []byte
	id   int
}

// decode decodes r's key and value as asked; a nil key or value stays
// nil (a tombstone has no value to decode).
func (d *recordDecoder) decode(ctx context.Context, r *kgo.Record) (key, value *decodedPart, err error) {
	part := func(name string, b []byte, want int) (*decodedPart, error) {
		if b == nil {
			return nil, nil
		}
		text, sch, err := d.sd.DecodeJSON(ctx, b)
		if err != nil {
			return nil, fmt.Errorf("partition %d offset %d: %s: %w", r.Partition, r.Offset, name, d.flags.registryErr(err))
		}
		if want != 0 && sch.ID != want {
			return nil, fmt.Errorf("partition %d offset %d: %s written with schema id %d, not --%s-schema's %d",
				r.Partition, r.Offset, name, sch.ID, name, want)
		}
		return &decodedPart{json: text, id: sch.ID}, nil
	}
	if d.key {
		if key, err = part("key", r.Key, d.keyID); err != nil {
			return nil, nil, err
		}
	}
	if d.value {
		if value, err = part("value", r.Value, d.valueID); err != nil {
			return nil, nil, err
		}
	}
	return key, value, nil
}
