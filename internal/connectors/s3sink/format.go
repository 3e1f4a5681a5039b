package s3sink

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"time"

	"github.com/samsa-io/samsa/connect"
)

// errRecord marks a record a format cannot write (Confluent's
// DataException): the record's fault, so it goes to the errant record
// reporter when there is one, and never counts as a store failure.
var errRecord = errors.New("s3sink: cannot write record")

// fileEncoder builds one file in memory. The whole file is kept until its
// commit so that a failed upload can be retried from the same bytes: the
// store never sees a part of a file (see docs/connect/s3-sink.md).
type fileEncoder interface {
	// write appends the value of a record.
	write(r *connect.SinkRecord) error
	// finish completes the file (footers, last blocks) and returns it.
	finish() ([]byte, error)
}

// newEncoder starts a file of the configured format for records whose
// value schema is schema (nil for schemaless records).
func (c *config) newEncoder(schema *connect.Schema) (fileEncoder, error) {
	switch c.format {
	case formatAvro:
		return newAvroEncoder(schema, c.avroCodec)
	case formatParquet:
		return newParquetEncoder(schema, c.parquetCodec)
	case formatByteArray:
		return c.gzipped(&byteArrayEncoder{sep: []byte(c.byteArraySep)}), nil
	}
	return c.gzipped(&jsonEncoder{}), nil
}

// gzipped compresses a file's bytes when it is finished
// (s3.compression.type=gzip): one gzip member per object, as Confluent's.
func (c *config) gzipped(e fileEncoder) fileEncoder {
	if c.gzipLevel == -2 {
		return e
	}
	return gzipEncoder{fileEncoder: e, level: c.gzipLevel}
}

type gzipEncoder struct {
	fileEncoder
	level int
}

func (g gzipEncoder) finish() ([]byte, error) {
	raw, err := g.fileEncoder.finish()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, g.level)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(raw); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// schemaBound reports whether a file holds one value schema, so a record
// with another schema starts new files (Avro and Parquet write the schema
// once per file; Confluent's schema.compatibility=NONE).
func (c *config) schemaBound() bool {
	return c.format == formatAvro || c.format == formatParquet
}

// jsonEncoder is Confluent's JsonFormat: one JSON value per line, as Kafka's
// JsonConverter writes it with schemas.enable=false.
type jsonEncoder struct{ buf bytes.Buffer }

func (e *jsonEncoder) write(r *connect.SinkRecord) error {
	mark := e.buf.Len()
	if err := appendJSON(&e.buf, r.ValueSchema, r.Value); err != nil {
		e.buf.Truncate(mark)
		return fmt.Errorf("%w at offset %d: %w", errRecord, r.Offset(), err)
	}
	e.buf.WriteByte('\n')
	return nil
}

func (e *jsonEncoder) finish() ([]byte, error) { return e.buf.Bytes(), nil }

// byteArrayEncoder is Confluent's ByteArrayFormat: each value's bytes and
// then the separator.
type byteArrayEncoder struct {
	buf bytes.Buffer
	sep []byte
}

func (e *byteArrayEncoder) write(r *connect.SinkRecord) error {
	b, ok := r.Value.([]byte)
	if !ok {
		if s, isString := r.Value.(string); isString {
			b = []byte(s)
		} else {
			return fmt.Errorf("%w at offset %d: ByteArrayFormat needs bytes, got %T", errRecord, r.Offset(), r.Value)
		}
	}
	e.buf.Write(b)
	e.buf.Write(e.sep)
	return nil
}

func (e *byteArrayEncoder) finish() ([]byte, error) { return e.buf.Bytes(), nil }

// appendJSON writes a Connect value as JsonConverter does without schemas:
// structs as objects in field order, Decimal as base64 of the unscaled
// bytes (json.decimal.format=BASE64), Date as days, Time as milliseconds of
// the day, Timestamp as epoch milliseconds, maps with non-string keys as
// arrays of [key, value] pairs.
func appendJSON(b *bytes.Buffer, s *connect.Schema, v any) error {
	if v == nil && s != nil && s.Default != nil {
		v = s.Default
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case *connect.Struct:
		return appendStructJSON(b, x)
	case map[string]any:
		return appendStringMapJSON(b, x, nil)
	case map[any]any:
		return appendAnyMapJSON(b, s, x)
	case []any:
		var elem *connect.Schema
		if s != nil {
			elem = s.ValueSchema
		}
		b.WriteByte('[')
		for i, item := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := appendJSON(b, elem, item); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case connect.Decimal:
		return writeJSONScalar(b, base64.StdEncoding.EncodeToString(unscaledBytes(x)))
	case time.Time:
		b.WriteString(strconv.FormatInt(logicalTimeValue(s, x), 10))
	case float32:
		return appendFloat(b, float64(x), 32)
	case float64:
		return appendFloat(b, x, 64)
	default:
		return writeJSONScalar(b, v)
	}
	return nil
}

func appendFloat(b *bytes.Buffer, f float64, bits int) error {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return writeJSONScalar(b, strconv.FormatFloat(f, 'g', -1, bits))
	}
	b.WriteString(strconv.FormatFloat(f, 'g', -1, bits))
	return nil
}

func writeJSONScalar(b *bytes.Buffer, v any) error {
	switch v.(type) {
	case bool, string, []byte, int8, int16, int32, int64, int, uint8, uint16, uint32, uint64:
	default:
		return fmt.Errorf("cannot write %T as JSON", v)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b.Write(out)
	return nil
}

func appendStructJSON(b *bytes.Buffer, st *connect.Struct) error {
	b.WriteByte('{')
	for i, f := range st.Schema().Fields {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(f.Name)
		b.Write(name)
		b.WriteByte(':')
		if err := appendJSON(b, f.Schema, st.GetField(f)); err != nil {
			return fmt.Errorf("field %s: %w", f.Name, err)
		}
	}
	b.WriteByte('}')
	return nil
}

func appendStringMapJSON(b *bytes.Buffer, m map[string]any, valueSchema *connect.Schema) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(k)
		b.Write(name)
		b.WriteByte(':')
		if err := appendJSON(b, valueSchema, m[k]); err != nil {
			return err
		}
	}
	b.WriteByte('}')
	return nil
}

func appendAnyMapJSON(b *bytes.Buffer, s *connect.Schema, m map[any]any) error {
	var keySchema, valueSchema *connect.Schema
	if s != nil {
		keySchema, valueSchema = s.KeySchema, s.ValueSchema
	}
	strKeys := map[string]any{}
	for k, v := range m {
		ks, ok := k.(string)
		if !ok {
			return appendMapEntriesJSON(b, keySchema, valueSchema, m)
		}
		strKeys[ks] = v
	}
	return appendStringMapJSON(b, strKeys, valueSchema)
}

// appendMapEntriesJSON writes a map with non-string keys as JsonConverter
// does: an array of [key, value] pairs (sorted by the key's JSON for a
// stable file).
func appendMapEntriesJSON(b *bytes.Buffer, ks, vs *connect.Schema, m map[any]any) error {
	type entry struct{ key, value []byte }
	entries := make([]entry, 0, len(m))
	for k, v := range m {
		var kb, vb bytes.Buffer
		if err := appendJSON(&kb, ks, k); err != nil {
			return err
		}
		if err := appendJSON(&vb, vs, v); err != nil {
			return err
		}
		entries = append(entries, entry{kb.Bytes(), vb.Bytes()})
	}
	sort.Slice(entries, func(i, j int) bool { return bytes.Compare(entries[i].key, entries[j].key) < 0 })
	b.WriteByte('[')
	for i, e := range entries {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('[')
		b.Write(e.key)
		b.WriteByte(',')
		b.Write(e.value)
		b.WriteByte(']')
	}
	b.WriteByte(']')
	return nil
}

// logicalTimeValue is a time as its logical type stores it: Date as days,
// Time as milliseconds of the day, anything else as epoch milliseconds.
func logicalTimeValue(s *connect.Schema, t time.Time) int64 {
	if s != nil {
		switch s.Name {
		case connect.DateName:
			return int64(math.Floor(float64(t.UnixMilli()) / float64(24*time.Hour.Milliseconds())))
		case connect.TimeName:
			return t.UnixMilli() - t.Truncate(24*time.Hour).UnixMilli()
		}
	}
	return t.UnixMilli()
}

// unscaledBytes is a decimal's unscaled value as big-endian two's
// complement, as Kafka's Decimal logical type stores it.
func unscaledBytes(d connect.Decimal) []byte {
	n := d.Unscaled
	if n == nil {
		n = new(big.Int)
	}
	if n.Sign() >= 0 {
		b := n.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// Two's complement of a negative number: 2^(8k) + n for the smallest k
	// that keeps the sign bit set.
	k := (n.BitLen() + 8) / 8
	mod := new(big.Int).Lsh(big.NewInt(1), uint(8*k))
	b := new(big.Int).Add(mod, n).Bytes()
	for len(b) < k {
		b = append([]byte{0xff}, b...)
	}
	return b
}
