package serde

// Avro's JSON encoding (the Avro specification's "JSON Encoding", what
// kafka-avro-console-producer reads and kafka-avro-console-consumer
// prints) to and from Avro's binary encoding, walking the schema. hamba/avro
// has no JSON encoding of its own; going through its Go values would turn
// logical types into time.Time or big.Rat, which the JSON encoding does not
// do (a timestamp-millis is its long).
//
// The rules: null, booleans, numbers and strings as JSON's; bytes and
// fixed as a string whose code points 0 to 255 are the bytes; an enum as
// its symbol; a record as an object (a missing field takes its default,
// an unknown field is an error); a map as an object; a union's null as
// null and any other branch as {"<type name>": value}, the name being a
// named type's full name. NaN and the infinities, which JSON lacks, are
// the strings "NaN", "Infinity" and "-Infinity".

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/hamba/avro/v2"
)

// avroJSONToBinary encodes text, one JSON value in Avro's JSON encoding,
// under s.
func avroJSONToBinary(s avro.Schema, text []byte) ([]byte, error) {
	d := json.NewDecoder(bytes.NewReader(text))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if d.More() {
		return nil, errors.New("invalid JSON: more than one value")
	}
	w := avro.NewWriter(nil, 256)
	if err := writeAvroJSON(w, s, v, "$"); err != nil {
		return nil, err
	}
	if w.Error != nil {
		return nil, w.Error
	}
	return w.Buffer(), nil
}

func mismatch(path string, want string, v any) error {
	return fmt.Errorf("%s: want %s, got %s", path, want, jsonKind(v))
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func writeAvroJSON(w *avro.Writer, s avro.Schema, v any, path string) error {
	if ref, ok := s.(*avro.RefSchema); ok {
		s = ref.Schema()
	}
	switch s.Type() {
	case avro.Null:
		if v != nil {
			return mismatch(path, "null", v)
		}
	case avro.Boolean:
		b, ok := v.(bool)
		if !ok {
			return mismatch(path, "a boolean", v)
		}
		w.WriteBool(b)
	case avro.Int, avro.Long:
		return writeAvroInteger(w, s.Type(), v, path)
	case avro.Float, avro.Double:
		f, err := jsonFloat(v, path)
		if err != nil {
			return err
		}
		if s.Type() == avro.Float {
			w.WriteFloat(float32(f))
		} else {
			w.WriteDouble(f)
		}
	case avro.String:
		str, ok := v.(string)
		if !ok {
			return mismatch(path, "a string", v)
		}
		w.WriteString(str)
	case avro.Bytes:
		b, err := latin1Bytes(v, path)
		if err != nil {
			return err
		}
		w.WriteBytes(b)
	case avro.Fixed:
		b, err := latin1Bytes(v, path)
		if err != nil {
			return err
		}
		if size := s.(*avro.FixedSchema).Size(); len(b) != size {
			return fmt.Errorf("%s: fixed %s needs %d bytes, got %d", path, s.(*avro.FixedSchema).FullName(), size, len(b))
		}
		_, _ = w.Write(b)
	case avro.Enum:
		return writeAvroEnum(w, s.(*avro.EnumSchema), v, path)
	case avro.Array:
		items, ok := v.([]any)
		if !ok {
			return mismatch(path, "an array", v)
		}
		if len(items) > 0 {
			w.WriteLong(int64(len(items)))
			for i, item := range items {
				if err := writeAvroJSON(w, s.(*avro.ArraySchema).Items(), item, path+"["+strconv.Itoa(i)+"]"); err != nil {
					return err
				}
			}
		}
		w.WriteLong(0)
	case avro.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return mismatch(path, "an object (a map)", v)
		}
		if len(m) > 0 {
			w.WriteLong(int64(len(m)))
			for _, k := range sortedKeys(m) {
				w.WriteString(k)
				if err := writeAvroJSON(w, s.(*avro.MapSchema).Values(), m[k], path+"."+k); err != nil {
					return err
				}
			}
		}
		w.WriteLong(0)
	case avro.Record, avro.Error:
		return writeAvroRecord(w, s.(*avro.RecordSchema), v, path)
	case avro.Union:
		return writeAvroUnion(w, s.(*avro.UnionSchema), v, path)
	default:
		return fmt.Errorf("%s: Avro type %s is not supported", path, s.Type())
	}
	return nil
}

func writeAvroInteger(w *avro.Writer, t avro.Type, v any, path string) error {
	n, ok := v.(json.Number)
	if !ok {
		return mismatch(path, "an integer", v)
	}
	bits := 64
	if t == avro.Int {
		bits = 32
	}
	i, err := strconv.ParseInt(n.String(), 10, bits)
	if err != nil {
		return fmt.Errorf("%s: %s is not an Avro %s", path, n, t)
	}
	if t == avro.Int {
		w.WriteInt(int32(i))
	} else {
		w.WriteLong(i)
	}
	return nil
}

func jsonFloat(v any, path string) (float64, error) {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(x.String(), 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %s is not a number", path, x)
		}
		return f, nil
	case string:
		switch x {
		case "NaN":
			return math.NaN(), nil
		case "Infinity":
			return math.Inf(1), nil
		case "-Infinity":
			return math.Inf(-1), nil
		}
	}
	return 0, mismatch(path, "a number", v)
}

// latin1Bytes reads Avro's JSON encoding of bytes: each code point 0 to
// 255 is one byte.
func latin1Bytes(v any, path string) ([]byte, error) {
	s, ok := v.(string)
	if !ok {
		return nil, mismatch(path, "a string (bytes as code points 0 to 255)", v)
	}
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 255 {
			return nil, fmt.Errorf("%s: bytes are written as code points 0 to 255, got %q", path, r)
		}
		out = append(out, byte(r))
	}
	return out, nil
}

func writeAvroEnum(w *avro.Writer, s *avro.EnumSchema, v any, path string) error {
	sym, ok := v.(string)
	if !ok {
		return mismatch(path, "a string (an enum symbol)", v)
	}
	for i, x := range s.Symbols() {
		if x == sym {
			w.WriteInt(int32(i))
			return nil
		}
	}
	return fmt.Errorf("%s: %q is not a symbol of enum %s %v", path, sym, s.FullName(), s.Symbols())
}

func writeAvroRecord(w *avro.Writer, s *avro.RecordSchema, v any, path string) error {
	m, ok := v.(map[string]any)
	if !ok {
		return mismatch(path, "an object (record "+s.FullName()+")", v)
	}
	known := make(map[string]bool, len(s.Fields()))
	for _, f := range s.Fields() {
		known[f.Name()] = true
		fv, present := m[f.Name()]
		switch {
		case present:
			if err := writeAvroJSON(w, f.Type(), fv, path+"."+f.Name()); err != nil {
				return err
			}
		case f.HasDefault():
			b, err := avro.Marshal(f.Type(), f.Default())
			if err != nil {
				return fmt.Errorf("%s.%s: default: %w", path, f.Name(), err)
			}
			_, _ = w.Write(b)
		default:
			return fmt.Errorf("%s: field %q of record %s is missing and has no default", path, f.Name(), s.FullName())
		}
	}
	for _, k := range sortedKeys(m) {
		if !known[k] {
			return fmt.Errorf("%s: record %s has no field %q", path, s.FullName(), k)
		}
	}
	return nil
}

func writeAvroUnion(w *avro.Writer, s *avro.UnionSchema, v any, path string) error {
	if v == nil {
		for i, t := range s.Types() {
			if t.Type() == avro.Null {
				w.WriteLong(int64(i))
				return nil
			}
		}
		return fmt.Errorf("%s: null is not a branch of union %s", path, unionNames(s))
	}
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return fmt.Errorf("%s: a union's value is null or {\"<branch type>\": value}, one of %s; got %s", path, unionNames(s), jsonKind(v))
	}
	for name, inner := range m {
		for i, t := range s.Types() {
			if avroTypeName(t) == name {
				w.WriteLong(int64(i))
				return writeAvroJSON(w, t, inner, path+"."+name)
			}
		}
		return fmt.Errorf("%s: %q is not a branch of union %s", path, name, unionNames(s))
	}
	return nil
}

// avroTypeName is how the JSON encoding names a union branch.
func avroTypeName(s avro.Schema) string {
	if ref, ok := s.(*avro.RefSchema); ok {
		s = ref.Schema()
	}
	if n, ok := s.(avro.NamedSchema); ok {
		return n.FullName()
	}
	return string(s.Type())
}

func unionNames(s *avro.UnionSchema) string {
	names := make([]string, len(s.Types()))
	for i, t := range s.Types() {
		names[i] = avroTypeName(t)
	}
	return "[" + strings.Join(names, ", ") + "]"
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// avroBinaryToJSON decodes b, one value written with s, into Avro's JSON
// encoding. Every byte must be used: trailing bytes mean the payload was
// written with another schema.
func avroBinaryToJSON(s avro.Schema, b []byte) ([]byte, error) {
	r := avro.NewReader(nil, 0).Reset(b)
	var out bytes.Buffer
	// A zero-byte item (null, an empty record) costs nothing to announce:
	// the entries of arrays and maps are capped so that a hostile count
	// cannot make the output unbounded.
	budget := 8*len(b) + 1024
	if err := readAvroJSON(r, s, &out, "$", &budget); err != nil {
		return nil, err
	}
	if r.Error != nil {
		return nil, fmt.Errorf("%w: %v", ErrPayloadMismatch, r.Error)
	}
	// Reading one more byte must hit the end of the payload.
	if r.ReadBool(); r.Error == nil {
		return nil, fmt.Errorf("%w: bytes left after the value", ErrPayloadMismatch)
	}
	return out.Bytes(), nil
}

// readAvroJSON writes the value read from r to out. A read past the end
// sets r.Error; loops stop at the first error, so a hostile count cannot
// spin.
func readAvroJSON(r *avro.Reader, s avro.Schema, out *bytes.Buffer, path string, budget *int) error {
	if r.Error != nil {
		return nil
	}
	if ref, ok := s.(*avro.RefSchema); ok {
		s = ref.Schema()
	}
	switch s.Type() {
	case avro.Null:
		out.WriteString("null")
	case avro.Boolean:
		out.WriteString(strconv.FormatBool(r.ReadBool()))
	case avro.Int:
		out.WriteString(strconv.FormatInt(int64(r.ReadInt()), 10))
	case avro.Long:
		out.WriteString(strconv.FormatInt(r.ReadLong(), 10))
	case avro.Float:
		writeJSONFloat(out, float64(r.ReadFloat()), 32)
	case avro.Double:
		writeJSONFloat(out, r.ReadDouble(), 64)
	case avro.String:
		writeJSONString(out, r.ReadString())
	case avro.Bytes:
		writeJSONString(out, latin1String(r.ReadBytes()))
	case avro.Fixed:
		b := make([]byte, s.(*avro.FixedSchema).Size())
		r.Read(b)
		writeJSONString(out, latin1String(b))
	case avro.Enum:
		i := r.ReadInt()
		sym, ok := s.(*avro.EnumSchema).Symbol(int(i))
		if !ok && r.Error == nil {
			return fmt.Errorf("%w: %s: enum index %d out of range", ErrPayloadMismatch, path, i)
		}
		writeJSONString(out, sym)
	case avro.Array:
		return readAvroBlocks(r, out, budget, '[', ']', func(i int) error {
			return readAvroJSON(r, s.(*avro.ArraySchema).Items(), out, path+"["+strconv.Itoa(i)+"]", budget)
		})
	case avro.Map:
		return readAvroBlocks(r, out, budget, '{', '}', func(int) error {
			k := r.ReadString()
			writeJSONString(out, k)
			out.WriteByte(':')
			return readAvroJSON(r, s.(*avro.MapSchema).Values(), out, path+"."+k, budget)
		})
	case avro.Record, avro.Error:
		out.WriteByte('{')
		for i, f := range s.(*avro.RecordSchema).Fields() {
			if i > 0 {
				out.WriteByte(',')
			}
			writeJSONString(out, f.Name())
			out.WriteByte(':')
			if err := readAvroJSON(r, f.Type(), out, path+"."+f.Name(), budget); err != nil {
				return err
			}
		}
		out.WriteByte('}')
	case avro.Union:
		return readAvroUnion(r, s.(*avro.UnionSchema), out, path, budget)
	default:
		return fmt.Errorf("%s: Avro type %s is not supported", path, s.Type())
	}
	return nil
}

func readAvroUnion(r *avro.Reader, s *avro.UnionSchema, out *bytes.Buffer, path string, budget *int) error {
	i := r.ReadLong()
	if r.Error != nil {
		return nil
	}
	if i < 0 || i >= int64(len(s.Types())) {
		return fmt.Errorf("%w: %s: union branch %d of %d", ErrPayloadMismatch, path, i, len(s.Types()))
	}
	t := s.Types()[i]
	if t.Type() == avro.Null {
		out.WriteString("null")
		return nil
	}
	out.WriteByte('{')
	writeJSONString(out, avroTypeName(t))
	out.WriteByte(':')
	if err := readAvroJSON(r, t, out, path, budget); err != nil {
		return err
	}
	out.WriteByte('}')
	return nil
}

// readAvroBlocks reads an array's or a map's blocks, calling item for
// each entry.
func readAvroBlocks(r *avro.Reader, out *bytes.Buffer, budget *int, open, close byte, item func(i int) error) error {
	out.WriteByte(open)
	n := 0
	for r.Error == nil {
		count, _ := r.ReadBlockHeader()
		if count == 0 || r.Error != nil {
			break
		}
		for range count {
			if r.Error != nil {
				break
			}
			if *budget--; *budget < 0 {
				return fmt.Errorf("%w: more array or map entries than the payload can hold", ErrPayloadMismatch)
			}
			if n > 0 {
				out.WriteByte(',')
			}
			if err := item(n); err != nil {
				return err
			}
			n++
		}
	}
	out.WriteByte(close)
	return nil
}

func latin1String(b []byte) string {
	var sb strings.Builder
	for _, c := range b {
		sb.WriteRune(rune(c))
	}
	return sb.String()
}

func writeJSONString(out *bytes.Buffer, s string) {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	out.Truncate(out.Len() - 1) // Encode's newline
}

func writeJSONFloat(out *bytes.Buffer, f float64, bits int) {
	switch {
	case math.IsNaN(f):
		out.WriteString(`"NaN"`)
	case math.IsInf(f, 1):
		out.WriteString(`"Infinity"`)
	case math.IsInf(f, -1):
		out.WriteString(`"-Infinity"`)
	default:
		out.WriteString(strconv.FormatFloat(f, 'g', -1, bits))
	}
}
