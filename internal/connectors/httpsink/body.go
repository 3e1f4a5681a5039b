package httpsink

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/samsa-io/samsa/connect"
)

// batchBody joins the records' values into one request body: as a JSON
// array, or between prefix and suffix with the separator between.
func (s *settings) batchBody(records []connect.SinkRecord) []byte {
	var b bytes.Buffer
	open, sep, close := s.prefix, s.separator, s.suffix
	if s.jsonArray {
		open, sep, close = "[", ",", "]"
	}
	b.WriteString(open)
	for i, r := range records {
		if i > 0 {
			b.WriteString(sep)
		}
		if s.format == formatJSON {
			appendJSON(&b, r.ValueSchema, r.Value)
		} else {
			b.WriteString(text(r.Value))
		}
	}
	b.WriteString(close)
	return b.Bytes()
}

func (s *settings) contentType() string {
	if s.format == formatJSON {
		return "application/json"
	}
	return "text/plain; charset=utf-8"
}

// recordURL is http.api.url with ${topic} and ${key} replaced, escaped as
// path segments.
func (s *settings) recordURL(r connect.SinkRecord) string {
	if !strings.Contains(s.url, "${") {
		return s.url
	}
	return strings.NewReplacer(
		"${topic}", url.PathEscape(r.Topic),
		"${key}", url.PathEscape(text(r.Key)),
	).Replace(s.url)
}

// text is a value as its string: Java's toString where Confluent's sink
// calls it (null, 1.0 for a double, [a, b], {k=v}); bytes as UTF-8 text.
func text(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	case []byte:
		return string(x)
	case float64:
		return javaDouble(x, 64)
	case float32:
		return javaDouble(float64(x), 32)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = text(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		entries := make([]string, 0, len(x))
		for k, e := range x {
			entries = append(entries, k+"="+text(e))
		}
		sort.Strings(entries)
		return "{" + strings.Join(entries, ", ") + "}"
	case map[any]any:
		entries := make([]string, 0, len(x))
		for k, e := range x {
			entries = append(entries, text(k)+"="+text(e))
		}
		sort.Strings(entries)
		return "{" + strings.Join(entries, ", ") + "}"
	case fmt.Stringer: // *connect.Struct, connect.Decimal
		return x.String()
	}
	return fmt.Sprint(v)
}

// javaDouble is Double.toString: 1.0, 0.5, 1.0E7.
func javaDouble(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 0):
		if f > 0 {
			return "Infinity"
		}
		return "-Infinity"
	}
	if a := math.Abs(f); a == 0 || (a >= 1e-3 && a < 1e7) {
		s := strconv.FormatFloat(f, 'f', -1, bits)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	mant, exp, _ := strings.Cut(strconv.FormatFloat(f, 'E', -1, bits), "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

// appendJSON writes a value as JSON, as Kafka's JsonConverter writes it
// without schemas: a struct as an object in field order, bytes as base64,
// Timestamp and Time as milliseconds, Date as days, Decimal as a number.
// A string or bytes value that holds a JSON object or array is written as
// that JSON, since it already is the body's element (StringConverter
// values of JSON text).
func appendJSON(b *bytes.Buffer, schema *connect.Schema, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case string:
		if isJSONContainer([]byte(x)) {
			b.WriteString(strings.TrimSpace(x))
			return
		}
		writeJSON(b, x)
	case []byte:
		if isJSONContainer(x) {
			b.Write(bytes.TrimSpace(x))
			return
		}
		writeJSON(b, base64.StdEncoding.EncodeToString(x))
	case float64:
		appendFloat(b, x, 64)
	case float32:
		appendFloat(b, float64(x), 32)
	case *connect.Struct:
		appendStruct(b, x)
	case []any:
		var elem *connect.Schema
		if schema != nil {
			elem = schema.ValueSchema
		}
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			appendJSON(b, elem, e)
		}
		b.WriteByte(']')
	case map[string]any:
		appendMap(b, schema, len(x), func(yield func(k string, v any)) {
			for k, e := range x {
				yield(k, e)
			}
		})
	case map[any]any:
		appendMap(b, schema, len(x), func(yield func(k string, v any)) {
			for k, e := range x {
				yield(text(k), e)
			}
		})
	case connect.Decimal:
		b.WriteString(x.String())
	case time.Time:
		appendTime(b, schema, x)
	default:
		writeJSON(b, v)
	}
}

func isJSONContainer(raw []byte) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && (t[0] == '{' || t[0] == '[') && json.Valid(t)
}

func writeJSON(b *bytes.Buffer, v any) {
	out, err := json.Marshal(v)
	if err != nil {
		out, _ = json.Marshal(fmt.Sprint(v))
	}
	b.Write(out)
}

// appendFloat writes NaN and the infinities as strings, which JSON has no
// number for.
func appendFloat(b *bytes.Buffer, f float64, bits int) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		writeJSON(b, javaDouble(f, bits))
		return
	}
	b.WriteString(strconv.FormatFloat(f, 'g', -1, bits))
}

func appendStruct(b *bytes.Buffer, st *connect.Struct) {
	b.WriteByte('{')
	for i, f := range st.Schema().Fields {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSON(b, f.Name)
		b.WriteByte(':')
		appendJSON(b, f.Schema, st.GetField(f))
	}
	b.WriteByte('}')
}

// appendMap writes an object with its keys sorted, so that a body is the
// same for the same records.
func appendMap(b *bytes.Buffer, schema *connect.Schema, n int, each func(yield func(k string, v any))) {
	type entry struct {
		k string
		v any
	}
	entries := make([]entry, 0, n)
	each(func(k string, v any) { entries = append(entries, entry{k, v}) })
	sort.Slice(entries, func(i, j int) bool { return entries[i].k < entries[j].k })
	var elem *connect.Schema
	if schema != nil {
		elem = schema.ValueSchema
	}
	b.WriteByte('{')
	for i, e := range entries {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSON(b, e.k)
		b.WriteByte(':')
		appendJSON(b, elem, e.v)
	}
	b.WriteByte('}')
}

func appendTime(b *bytes.Buffer, schema *connect.Schema, t time.Time) {
	name := ""
	if schema != nil {
		name = schema.Name
	}
	switch name {
	case connect.DateName:
		days := t.Unix() / 86400
		if t.Unix()%86400 < 0 {
			days-- // floor: a date before 1970 counts back from it
		}
		b.WriteString(strconv.FormatInt(days, 10))
	case connect.TimeName:
		ms := t.UnixMilli() % 86_400_000
		b.WriteString(strconv.FormatInt(ms, 10))
	default:
		b.WriteString(strconv.FormatInt(t.UnixMilli(), 10))
	}
}
