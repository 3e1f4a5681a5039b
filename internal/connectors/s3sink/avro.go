package s3sink

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/hamba/avro/v2/ocf"
	"github.com/samsa-io/samsa/connect"
)

// avroCodecs are the avro.codec values hamba's container writer supports
// (Confluent's also offer bzip2 and xz, refused here by the validator).
var avroCodecs = map[string]ocf.CodecName{
	"null":      ocf.Null,
	"deflate":   ocf.Deflate,
	"snappy":    ocf.Snappy,
	"zstandard": ocf.ZStandard,
}

func avroCodecNames() []string { return sortedNames(avroCodecs) }

func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// avroEncoder is Confluent's AvroFormat: an Avro object container file
// whose schema is the Connect value schema turned into Avro (as Confluent's
// AvroData does for the common types).
type avroEncoder struct {
	buf    bytes.Buffer
	enc    *ocf.Encoder
	avro   avro.Schema
	schema *connect.Schema
	conv   *avroSchemaBuilder
}

func newAvroEncoder(s *connect.Schema, codec string) (fileEncoder, error) {
	if s == nil {
		return nil, fmt.Errorf("%w: AvroFormat needs records with a value schema (schemaless values cannot be written as Avro)", errRecord)
	}
	b := &avroSchemaBuilder{named: map[string]bool{}}
	as, err := b.schema(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errRecord, err)
	}
	text, err := json.Marshal(as)
	if err != nil {
		return nil, err
	}
	parsed, err := avro.Parse(string(text))
	if err != nil {
		return nil, fmt.Errorf("%w: Avro schema %s: %w", errRecord, text, err)
	}
	e := &avroEncoder{schema: s, conv: b, avro: parsed}
	e.enc, err = ocf.NewEncoderWithSchema(parsed, &e.buf, ocf.WithCodec(avroCodecs[codec]))
	if err != nil {
		return nil, fmt.Errorf("s3sink: Avro container: %w", err)
	}
	return e, nil
}

// write encodes the record on its own first, so a value that fails half
// way leaves nothing of itself in the file.
func (e *avroEncoder) write(r *connect.SinkRecord) error {
	v, err := avroValue(e.schema, r.Value, e.conv)
	var encoded []byte
	if err == nil {
		encoded, err = avro.Marshal(e.avro, v)
	}
	if err != nil {
		return fmt.Errorf("%w at offset %d: %w", errRecord, r.Offset(), err)
	}
	if _, err := e.enc.Write(encoded); err != nil {
		return fmt.Errorf("s3sink: Avro block: %w", err)
	}
	return nil
}

func (e *avroEncoder) finish() ([]byte, error) {
	if err := e.enc.Close(); err != nil {
		return nil, fmt.Errorf("s3sink: finish Avro file: %w", err)
	}
	return e.buf.Bytes(), nil
}

// avroSchemaBuilder turns Connect schemas into Avro schemas (as JSON
// values), naming anonymous structs ConnectDefault, ConnectDefault2... as
// Confluent's AvroData does, and remembering each struct's Avro name for
// the union branches of its values.
type avroSchemaBuilder struct {
	named map[string]bool
	anon  int
	names []structName
}

type structName struct {
	schema *connect.Schema
	name   string
}

func (b *avroSchemaBuilder) schema(s *connect.Schema) (any, error) {
	t, err := b.nonNull(s)
	if err != nil || !s.Optional {
		return t, err
	}
	return []any{"null", t}, nil
}

func (b *avroSchemaBuilder) nonNull(s *connect.Schema) (any, error) {
	switch s.Name {
	case connect.DecimalName:
		scale, _ := strconv.Atoi(s.Parameters[connect.DecimalScale])
		precision := 64
		if p, err := strconv.Atoi(s.Parameters["connect.decimal.precision"]); err == nil {
			precision = p
		}
		return map[string]any{"type": "bytes", "logicalType": "decimal", "precision": precision, "scale": scale}, nil
	case connect.DateName:
		return map[string]any{"type": "int", "logicalType": "date"}, nil
	case connect.TimeName:
		return map[string]any{"type": "int", "logicalType": "time-millis"}, nil
	case connect.TimestampName:
		return map[string]any{"type": "long", "logicalType": "timestamp-millis"}, nil
	}
	switch s.Type {
	case connect.Int8, connect.Int16:
		return map[string]any{"type": "int", "connect.type": map[connect.Type]string{connect.Int8: "int8", connect.Int16: "int16"}[s.Type]}, nil
	case connect.Int32:
		return "int", nil
	case connect.Int64:
		return "long", nil
	case connect.Float32:
		return "float", nil
	case connect.Float64:
		return "double", nil
	case connect.Boolean:
		return "boolean", nil
	case connect.String:
		return "string", nil
	case connect.Bytes:
		return "bytes", nil
	case connect.Array:
		items, err := b.schema(s.ValueSchema)
		return map[string]any{"type": "array", "items": items}, err
	case connect.Map:
		if s.KeySchema == nil || s.KeySchema.Type != connect.String {
			return nil, fmt.Errorf("maps with %s keys cannot be written as Avro here (only string keys)", s.KeySchema)
		}
		values, err := b.schema(s.ValueSchema)
		return map[string]any{"type": "map", "values": values}, err
	case connect.Struct_:
		return b.record(s)
	}
	return nil, fmt.Errorf("schema type %s has no Avro form", s.Type)
}

func (b *avroSchemaBuilder) record(s *connect.Schema) (any, error) {
	name := b.nameOf(s)
	if b.named[name] {
		return name, nil
	}
	b.named[name] = true
	fields := make([]any, 0, len(s.Fields))
	for _, f := range s.Fields {
		t, err := b.schema(f.Schema)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Name, err)
		}
		field := map[string]any{"name": f.Name, "type": t}
		if f.Schema.Optional {
			field["default"] = nil
		}
		fields = append(fields, field)
	}
	return map[string]any{"type": "record", "name": name, "fields": fields}, nil
}

// nameOf is the Avro full name of a struct schema, the same each time the
// same schema is asked for.
func (b *avroSchemaBuilder) nameOf(s *connect.Schema) string {
	for _, n := range b.names {
		if n.schema == s {
			return n.name
		}
	}
	name := s.Name
	if name == "" {
		b.anon++
		name = "ConnectDefault"
		if b.anon > 1 {
			name += strconv.Itoa(b.anon)
		}
	}
	b.names = append(b.names, structName{schema: s, name: name})
	return name
}

// avroValue turns a Connect value into what hamba encodes for its Avro
// schema; an optional value is wrapped as a union branch {name: value}.
func avroValue(s *connect.Schema, v any, b *avroSchemaBuilder) (any, error) {
	if v == nil && s.Default != nil {
		v = s.Default
	}
	if v == nil {
		if s.Optional {
			return nil, nil
		}
		return nil, fmt.Errorf("null value for a required %s", s)
	}
	inner, err := avroNonNull(s, v, b)
	if err != nil || !s.Optional {
		return inner, err
	}
	return map[string]any{avroBranch(s, b): inner}, nil
}

func avroNonNull(s *connect.Schema, v any, b *avroSchemaBuilder) (any, error) {
	switch x := v.(type) {
	case connect.Decimal:
		return new(big.Rat).SetFrac(x.Unscaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(x.Scale)), nil)), nil
	case time.Time:
		if s.Name == connect.TimeName {
			return time.Duration(logicalTimeValue(s, x)) * time.Millisecond, nil
		}
		return x, nil
	case int8:
		return int32(x), nil
	case int16:
		return int32(x), nil
	case *connect.Struct:
		out := make(map[string]any, len(s.Fields))
		for _, f := range s.Fields {
			fv, err := avroValue(f.Schema, x.GetField(f), b)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name, err)
			}
			out[f.Name] = fv
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, item := range x {
			iv, err := avroValue(s.ValueSchema, item, b)
			if err != nil {
				return nil, err
			}
			out[i] = iv
		}
		return out, nil
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, item := range x {
			ks, _ := k.(string)
			iv, err := avroValue(s.ValueSchema, item, b)
			if err != nil {
				return nil, err
			}
			out[ks] = iv
		}
		return out, nil
	}
	return v, nil
}

// avroBranch is the name hamba gives a union branch of this schema.
func avroBranch(s *connect.Schema, b *avroSchemaBuilder) string {
	switch s.Name {
	case connect.DecimalName:
		return "bytes.decimal"
	case connect.DateName:
		return "int.date"
	case connect.TimeName:
		return "int.time-millis"
	case connect.TimestampName:
		return "long.timestamp-millis"
	}
	switch s.Type {
	case connect.Int8, connect.Int16, connect.Int32:
		return "int"
	case connect.Int64:
		return "long"
	case connect.Float32:
		return "float"
	case connect.Float64:
		return "double"
	case connect.Struct_:
		return b.nameOf(s)
	}
	return map[connect.Type]string{connect.Boolean: "boolean", connect.String: "string", connect.Bytes: "bytes", connect.Array: "array", connect.Map: "map"}[s.Type]
}
