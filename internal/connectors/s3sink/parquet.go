package s3sink

import (
	"bytes"
	"fmt"
	"strconv"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/samsa-io/samsa/connect"
)

// parquetCodec is a parquet.codec value: parquet-go's codec and the file
// extension parquet-mr gives it (Confluent names files
// <...>.snappy.parquet).
type parquetCodec struct {
	codec compress.Codec
	ext   string
}

// parquetCodecs are Confluent's parquet.codec values that parquet-go
// writes. lzo is not implemented by parquet-go, and Confluent's lz4 is
// Hadoop's framing, which parquet-go does not write (it writes lz4_raw).
var parquetCodecs = map[string]parquetCodec{
	"none":    {&parquet.Uncompressed, ""},
	"snappy":  {&parquet.Snappy, ".snappy"},
	"gzip":    {&parquet.Gzip, ".gz"},
	"brotli":  {&parquet.Brotli, ".br"},
	"zstd":    {&parquet.Zstd, ".zstd"},
	"lz4_raw": {&parquet.Lz4Raw, ".lz4raw"},
}

func parquetCodecNames() []string { return sortedNames(parquetCodecs) }

// parquetEncoder is Confluent's ParquetFormat: one Parquet file per commit,
// its schema the Connect value schema (a struct) turned into Parquet types.
type parquetEncoder struct {
	buf    bytes.Buffer
	w      *parquet.Writer
	pq     *parquet.Schema
	schema *connect.Schema
}

func newParquetEncoder(s *connect.Schema, codec string) (fileEncoder, error) {
	if s == nil || s.Type != connect.Struct_ {
		return nil, fmt.Errorf("%w: ParquetFormat needs records whose value schema is a struct, got %v", errRecord, s)
	}
	group, err := parquetGroup(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errRecord, err)
	}
	name := s.Name
	if name == "" {
		name = "ConnectDefault"
	}
	e := &parquetEncoder{schema: s, pq: parquet.NewSchema(name, group)}
	e.w = parquet.NewWriter(&e.buf, e.pq, parquet.Compression(parquetCodecs[codec].codec))
	return e, nil
}

func (e *parquetEncoder) write(r *connect.SinkRecord) error {
	st, ok := r.Value.(*connect.Struct)
	if !ok {
		return fmt.Errorf("%w at offset %d: ParquetFormat needs a struct value, got %T", errRecord, r.Offset(), r.Value)
	}
	values, err := parquetStruct(e.schema, st)
	var row parquet.Row
	if err == nil {
		row, err = e.deconstruct(values)
	}
	if err != nil {
		return fmt.Errorf("%w at offset %d: %w", errRecord, r.Offset(), err)
	}
	if _, err := e.w.WriteRows([]parquet.Row{row}); err != nil {
		return fmt.Errorf("s3sink: Parquet row: %w", err)
	}
	return nil
}

// deconstruct turns the values into a row before the writer sees them, so
// a value parquet-go cannot take (it panics on some) is the record's error
// and leaves the file as it was.
func (e *parquetEncoder) deconstruct(values map[string]any) (row parquet.Row, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("parquet: %v", p)
		}
	}()
	return e.pq.Deconstruct(nil, values), nil
}

func (e *parquetEncoder) finish() ([]byte, error) {
	if err := e.w.Close(); err != nil {
		return nil, fmt.Errorf("s3sink: finish Parquet file: %w", err)
	}
	return e.buf.Bytes(), nil
}

func parquetGroup(s *connect.Schema) (parquet.Group, error) {
	if len(s.Fields) == 0 {
		return nil, fmt.Errorf("a struct with no fields cannot be written as Parquet")
	}
	g := parquet.Group{}
	for _, f := range s.Fields {
		n, err := parquetNode(f.Schema)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Name, err)
		}
		g[f.Name] = n
	}
	return g, nil
}

func parquetNode(s *connect.Schema) (parquet.Node, error) {
	n, err := parquetRequiredNode(s)
	if err != nil || !s.Optional {
		return n, err
	}
	return parquet.Optional(n), nil
}

func parquetRequiredNode(s *connect.Schema) (parquet.Node, error) {
	switch s.Name {
	case connect.DecimalName:
		scale, _ := strconv.Atoi(s.Parameters[connect.DecimalScale])
		precision := 38
		if p, err := strconv.Atoi(s.Parameters["connect.decimal.precision"]); err == nil {
			precision = p
		}
		return parquet.Decimal(scale, precision, parquet.ByteArrayType), nil
	case connect.DateName:
		return parquet.Date(), nil
	case connect.TimeName:
		return parquet.Time(parquet.Millisecond), nil
	case connect.TimestampName:
		return parquet.Timestamp(parquet.Millisecond), nil
	}
	switch s.Type {
	case connect.Int8:
		return parquet.Int(8), nil
	case connect.Int16:
		return parquet.Int(16), nil
	case connect.Int32:
		return parquet.Int(32), nil
	case connect.Int64:
		return parquet.Int(64), nil
	case connect.Float32:
		return parquet.Leaf(parquet.FloatType), nil
	case connect.Float64:
		return parquet.Leaf(parquet.DoubleType), nil
	case connect.Boolean:
		return parquet.Leaf(parquet.BooleanType), nil
	case connect.String:
		return parquet.String(), nil
	case connect.Bytes:
		return parquet.Leaf(parquet.ByteArrayType), nil
	case connect.Array:
		elem, err := parquetNode(s.ValueSchema)
		if err != nil {
			return nil, err
		}
		return parquet.List(elem), nil
	case connect.Struct_:
		g, err := parquetGroup(s)
		return g, err
	}
	// parquet-go cannot write a MAP column from dynamic values.
	return nil, fmt.Errorf("schema type %s cannot be written as Parquet here", s.Type)
}

// parquetStruct turns a struct into the map parquet-go writes as a row.
func parquetStruct(s *connect.Schema, st *connect.Struct) (map[string]any, error) {
	row := make(map[string]any, len(s.Fields))
	for _, f := range s.Fields {
		v, err := parquetValue(f.Schema, st.GetField(f))
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Name, err)
		}
		row[f.Name] = v
	}
	return row, nil
}

func parquetValue(s *connect.Schema, v any) (any, error) {
	switch x := v.(type) {
	case nil:
		if !s.Optional {
			return nil, fmt.Errorf("null value for a required %s", s)
		}
		return nil, nil
	case connect.Decimal:
		return unscaledBytes(x), nil
	case time.Time:
		if s.Name == connect.TimestampName {
			return x.UnixMilli(), nil
		}
		return int32(logicalTimeValue(s, x)), nil
	case int8:
		return int32(x), nil
	case int16:
		return int32(x), nil
	case *connect.Struct:
		return parquetStruct(s, x)
	case []any:
		out := make([]any, len(x))
		for i, item := range x {
			iv, err := parquetValue(s.ValueSchema, item)
			if err != nil {
				return nil, err
			}
			out[i] = iv
		}
		return out, nil
	}
	return v, nil
}
