package console

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/samsa-io/samsa/pkg/serde"
)

// msgsShowBytes is how much of a key or value the list shows; the record's
// own page shows up to msgsViewBytes.
const (
	msgsShowBytes = 2 << 10
	msgsViewBytes = 1 << 20
	// msgsRegistryTime bounds one registry lookup while decoding.
	msgsRegistryTime = 2 * time.Second
)

// msgsRecord is a record as the pages show it.
type msgsRecord struct {
	Partition     int32
	Offset        int64
	Timestamp     time.Time
	TimestampType string
	LeaderEpoch   int32
	ProducerID    int64
	ProducerEpoch int16
	Transactional bool
	Compression   string
	Key, Value    msgsDecoded
	Headers       []msgsHeader

	rec *kgo.Record
}

type msgsHeader struct {
	Name  string
	Value msgsDecoded
}

// msgsDecoded is a key's or a value's bytes decoded for reading.
type msgsDecoded struct {
	Null     bool
	Size     int    // the raw bytes' length
	Format   string // Avro, Protobuf, JSON Schema (through the registry), JSON, text, binary
	Text     string // what is shown: the decoded text, or a hex dump
	Hex      bool   // Text is a hex dump
	SchemaID int
	Subject  string
	Reason   string // why it is shown as hex when a decoding failed
	Cut      bool   // Text was cut to fit the page

	json    any  // the parsed JSON, for expressions
	isJSON  bool // json was parsed
	decoded []byte
}

// msgsDecoder decodes a request's records: in the wire format through the
// registry (schemas cached for the request), else as JSON, text or hex, as
// the page's decode choice says.
type msgsDecoder struct {
	mode     string // auto, text, json, hex
	serde    *serde.Serde
	reg      *sr.Client
	subjects map[int]string
	regErr   error // the registry's first failure: later records are not tried again
}

func (c *Console) msgsDecoder(r *http.Request, mode string) *msgsDecoder {
	d := &msgsDecoder{mode: mode, subjects: map[int]string{}}
	if reg := c.registry(r); reg != nil {
		d.reg, d.serde = reg, serde.New(reg)
	}
	return d
}

// record decodes rec: its key, value and headers.
func (d *msgsDecoder) record(ctx context.Context, rec *kgo.Record) *msgsRecord {
	m := &msgsRecord{
		Partition: rec.Partition, Offset: rec.Offset, Timestamp: rec.Timestamp.UTC(),
		LeaderEpoch: rec.LeaderEpoch, ProducerID: rec.ProducerID, ProducerEpoch: rec.ProducerEpoch,
		Transactional: rec.Attrs.IsTransactional(), rec: rec,
	}
	m.TimestampType = "CreateTime"
	if rec.Attrs.TimestampType() == 1 {
		m.TimestampType = "LogAppendTime"
	}
	m.Compression = [...]string{"none", "gzip", "snappy", "lz4", "zstd", "unknown", "unknown", "unknown"}[rec.Attrs.CompressionType()&7]
	m.Key = d.decode(ctx, rec.Key, rec.Key == nil)
	m.Value = d.decode(ctx, rec.Value, rec.Value == nil)
	for _, h := range rec.Headers {
		m.Headers = append(m.Headers, msgsHeader{Name: h.Key, Value: msgsPlain(h.Value, h.Value == nil, d.mode)})
	}
	return m
}

// decode decodes b; a failure shows the hex with its reason.
func (d *msgsDecoder) decode(ctx context.Context, b []byte, null bool) msgsDecoded {
	if null {
		return msgsDecoded{Null: true}
	}
	if d.mode == "auto" && len(b) >= 5 && b[0] == serde.MagicByte {
		return d.wire(ctx, b)
	}
	return msgsPlain(b, false, d.mode)
}

// wire decodes a payload in Confluent's wire format through the registry.
func (d *msgsDecoder) wire(ctx context.Context, b []byte) msgsDecoded {
	id, _, _ := serde.ParseHeader(b)
	fail := func(reason string) msgsDecoded {
		out := msgsHex(b)
		out.SchemaID, out.Reason = id, reason
		return out
	}
	switch {
	case d.serde == nil:
		if utf8.Valid(b) && msgsPrintable(string(b)) {
			return msgsPlain(b, false, "auto")
		}
		return fail(fmt.Sprintf("schema id %d (wire format) but the console has no Schema Registry configured", id))
	case d.regErr != nil:
		return fail(fmt.Sprintf("schema id %d not decoded: the Schema Registry failed: %v", id, d.regErr))
	}
	// A registry that does not answer costs one short wait, not one per
	// record: its first failure is remembered for the request.
	rctx, cancel := context.WithTimeout(ctx, msgsRegistryTime)
	defer cancel()
	text, sch, err := d.serde.DecodeJSON(rctx, b)
	if err != nil {
		if sch == nil && !errors.Is(err, serde.ErrSchemaNotFound) {
			d.regErr = err // the registry is down or refusing: do not wait on it for every record
		}
		return fail(fmt.Sprintf("schema id %d: %v", id, err))
	}
	out := msgsDecoded{Size: len(b), SchemaID: id, Format: msgsSchemaFormat(sch.Type), decoded: text}
	out.Text = msgsPretty(text)
	out.isJSON = json.Unmarshal(text, &out.json) == nil
	out.Subject = d.subject(ctx, id)
	return out
}

func msgsSchemaFormat(t serde.SchemaType) string {
	switch t {
	case serde.Protobuf:
		return "Protobuf"
	case serde.JSON:
		return "JSON Schema"
	}
	return "Avro"
}

// subject is a schema ID's subject when the registry tells (one lookup
// per ID and request); "" when it does not.
func (d *msgsDecoder) subject(ctx context.Context, id int) string {
	if s, ok := d.subjects[id]; ok {
		return s
	}
	rctx, cancel := context.WithTimeout(ctx, msgsRegistryTime)
	defer cancel()
	subs, err := d.reg.SubjectsByID(rctx, id)
	s := ""
	if err == nil && len(subs) > 0 {
		s = strings.Join(subs, ", ")
	}
	d.subjects[id] = s
	return s
}

// msgsPlain decodes bytes without a registry as mode says: auto is JSON
// (pretty) when it parses, text when it is printable UTF-8, hex otherwise.
func msgsPlain(b []byte, null bool, mode string) msgsDecoded {
	if null {
		return msgsDecoded{Null: true}
	}
	switch mode {
	case "hex":
		return msgsHex(b)
	case "text":
		s := strings.ToValidUTF8(string(b), "\uFFFD")
		return msgsDecoded{Size: len(b), Format: "text", Text: s, decoded: []byte(s)}
	case "json":
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			out := msgsHex(b)
			out.Reason = "not JSON: " + err.Error()
			return out
		}
		return msgsDecoded{Size: len(b), Format: "JSON", Text: msgsPretty(b), json: v, isJSON: true, decoded: b}
	}
	if !utf8.Valid(b) || !msgsPrintable(string(b)) {
		return msgsHex(b)
	}
	out := msgsDecoded{Size: len(b), Format: "text", Text: string(b), decoded: b}
	if t := bytes.TrimSpace(b); len(t) > 0 && (t[0] == '{' || t[0] == '[') && json.Unmarshal(b, &out.json) == nil {
		out.Format, out.Text, out.isJSON = "JSON", msgsPretty(b), true
	}
	return out
}

func msgsPrintable(s string) bool {
	for _, r := range s {
		if !unicode.IsPrint(r) && r != '\n' && r != '\r' && r != '\t' {
			return false
		}
	}
	return true
}

func msgsPretty(b []byte) string {
	var out bytes.Buffer
	if json.Indent(&out, b, "", "  ") != nil {
		return string(b)
	}
	return out.String()
}

// msgsHex is a hex dump of b (at most msgsViewBytes of it).
func msgsHex(b []byte) msgsDecoded {
	out := msgsDecoded{Size: len(b), Format: "binary", Hex: true, decoded: b}
	if len(b) > msgsViewBytes {
		b, out.Cut = b[:msgsViewBytes], true
	}
	out.Text = hex.Dump(b)
	return out
}

// shrink cuts what a list shows of a record (its own page shows it all)
// and drops what a kept record need not hold. Filters run before it.
func (m *msgsRecord) shrink() {
	for _, d := range []*msgsDecoded{&m.Key, &m.Value} {
		if len(d.Text) > msgsShowBytes {
			cut := msgsShowBytes
			for cut > 0 && !utf8.RuneStart(d.Text[cut]) {
				cut--
			}
			d.Text, d.Cut = d.Text[:cut], true
		}
		d.json, d.decoded = nil, nil
	}
	m.rec = nil // its headers are decoded; the raw bytes need not stay
}

// text is a decoded key's or value's text for filters: the decoded JSON
// or the raw text ("" when null).
func (d *msgsDecoded) text() string {
	if d.Null {
		return ""
	}
	return string(d.decoded)
}

// msgsFilter is a page's filter: each part set must match.
type msgsFilter struct {
	Key, Value string // contained in the decoded key / value text
	HeaderName string // a header of this name...
	HeaderVal  string // ...with this value (any value when HasVal is false)
	HasVal     bool
	Expr       string
	prog       *vm.Program

	ExprErrors int
	FirstErr   string
}

// msgsEnv is what an expression sees of a record.
type msgsEnv struct {
	Key       string            `expr:"key"`
	Value     string            `expr:"value"`
	Headers   map[string]string `expr:"headers"`
	Partition int               `expr:"partition"`
	Offset    int               `expr:"offset"`
	Timestamp time.Time         `expr:"timestamp"`
	JSON      any               `expr:"json"`
}

// msgsParseFilter reads a page's filter fields; a bad expression is a 400.
func msgsParseFilter(key, value, header, src string) (*msgsFilter, error) {
	f := &msgsFilter{Key: key, Value: value, Expr: strings.TrimSpace(src)}
	if header = strings.TrimSpace(header); header != "" {
		name, val, has := strings.Cut(header, "=")
		f.HeaderName, f.HeaderVal, f.HasVal = strings.TrimSpace(name), val, has
		if f.HeaderName == "" {
			return nil, badRequest("header filter %q: want name=value (or a name alone)", header)
		}
	}
	if f.Expr != "" {
		if len(f.Expr) > 4096 {
			return nil, badRequest("the expression is %d characters; at most 4096", len(f.Expr))
		}
		prog, err := expr.Compile(f.Expr, expr.Env(msgsEnv{}), expr.AsBool())
		if err != nil {
			return nil, badRequest("expression: %v", err)
		}
		f.prog = prog
	}
	return f, nil
}

// active tells whether the filter filters anything.
func (f *msgsFilter) active() bool {
	return f.Key != "" || f.Value != "" || f.HeaderName != "" || f.prog != nil
}

func (f *msgsFilter) match(m *msgsRecord) (bool, error) {
	if f.Key != "" && !strings.Contains(m.Key.text(), f.Key) {
		return false, nil
	}
	if f.Value != "" && !strings.Contains(m.Value.text(), f.Value) {
		return false, nil
	}
	if f.HeaderName != "" {
		found := false
		for _, h := range m.rec.Headers {
			if h.Key == f.HeaderName && (!f.HasVal || string(h.Value) == f.HeaderVal) {
				found = true
				break
			}
		}
		if !found {
			return false, nil
		}
	}
	if f.prog == nil {
		return true, nil
	}
	env := msgsEnv{Key: m.Key.text(), Value: m.Value.text(), Headers: map[string]string{}, Partition: int(m.Partition),
		Offset: int(m.Offset), Timestamp: m.Timestamp, JSON: m.Value.json}
	for _, h := range m.rec.Headers {
		env.Headers[h.Key] = string(h.Value)
	}
	out, err := expr.Run(f.prog, env)
	if err != nil {
		return false, err
	}
	ok, _ := out.(bool)
	return ok, nil
}

// noteErr counts an expression's failure on a record (it does not match).
func (f *msgsFilter) noteErr(m *msgsRecord, err error) {
	f.ExprErrors++
	if f.FirstErr == "" {
		f.FirstErr = fmt.Sprintf("partition %d offset %d: %v", m.Partition, m.Offset, err)
	}
}
