package cli

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kgo"
)

// defaultFormat prints each value on its own line.
const defaultFormat = `%v\n`

// formatHelp documents --format once for the flag and the errors.
const formatHelp = `output template: %k key, %v value, %p partition, %o offset, ` +
	`%t timestamp (Unix ms), %h headers (k=v,k=v), %T topic, %% a percent sign; ` +
	`escapes \n \t \r \\`

// recordFormat is a compiled --format template: literal runs and verbs in
// the order they print.
type recordFormat struct {
	parts []formatPart
}

// formatPart is a literal when verb is 0, else one of the verb letters.
type formatPart struct {
	verb    byte
	literal []byte
}

func parseFormat(s string) (*recordFormat, error) {
	f := &recordFormat{}
	var lit []byte
	flush := func() {
		if len(lit) > 0 {
			f.parts = append(f.parts, formatPart{literal: lit})
			lit = nil
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '%', '\\':
			if i+1 == len(s) {
				return nil, fmt.Errorf("invalid --format %q: it ends in a lone %q", s, string(c))
			}
			i++
			next := s[i]
			if c == '\\' {
				e, ok := escapes[next]
				if !ok {
					return nil, fmt.Errorf(`invalid --format %q: unknown escape \%c (want \n, \t, \r or \\)`, s, next)
				}
				lit = append(lit, e)
				continue
			}
			switch next {
			case '%':
				lit = append(lit, '%')
			case 'k', 'v', 'p', 'o', 't', 'h', 'T':
				flush()
				f.parts = append(f.parts, formatPart{verb: next})
			default:
				return nil, fmt.Errorf("invalid --format %q: unknown verb %%%c (want %%k %%v %%p %%o %%t %%h %%T or %%%%)", s, next)
			}
		default:
			lit = append(lit, c)
		}
	}
	flush()
	return f, nil
}

var escapes = map[byte]byte{'n': '\n', 't': '\t', 'r': '\r', '\\': '\\'}

// appendRecord renders r onto dst.
func (f *recordFormat) appendRecord(dst []byte, r *kgo.Record) []byte {
	for _, p := range f.parts {
		switch p.verb {
		case 0:
			dst = append(dst, p.literal...)
		case 'k':
			dst = append(dst, r.Key...)
		case 'v':
			dst = append(dst, r.Value...)
		case 'p':
			dst = strconv.AppendInt(dst, int64(r.Partition), 10)
		case 'o':
			dst = strconv.AppendInt(dst, r.Offset, 10)
		case 't':
			dst = strconv.AppendInt(dst, r.Timestamp.UnixMilli(), 10)
		case 'T':
			dst = append(dst, r.Topic...)
		case 'h':
			for i, h := range r.Headers {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = append(dst, h.Key...)
				dst = append(dst, '=')
				dst = append(dst, h.Value...)
			}
		}
	}
	return dst
}

// jsonRecord is one line of consume --json. Key and value are null when the
// record has none (a tombstone has a null value). Bytes that are not valid
// UTF-8 cannot go into a JSON string unchanged (encoding/json would replace
// them with U+FFFD), so such a key, value or header value is printed in
// standard base64, and its "..._encoding" field beside it says "base64";
// the field is left out for text.
type jsonRecord struct {
	Topic         string       `json:"topic"`
	Partition     int32        `json:"partition"`
	Offset        int64        `json:"offset"`
	Timestamp     int64        `json:"timestamp"`
	Key           *string      `json:"key"`
	KeyEncoding   string       `json:"key_encoding,omitempty"`
	Value         *string      `json:"value"`
	ValueEncoding string       `json:"value_encoding,omitempty"`
	Headers       []jsonHeader `json:"headers"`
}

type jsonHeader struct {
	Key           string `json:"key"`
	Value         string `json:"value"`
	ValueEncoding string `json:"value_encoding,omitempty"`
}

// jsonHelp documents --json once for the flag.
const jsonHelp = `print one JSON object per record (topic, partition, offset, timestamp, key, value, headers); ` +
	`a key, value or header value that is not valid UTF-8 is given in base64, ` +
	`with "key_encoding", "value_encoding" or the header's "value_encoding" set to "base64"`

// recordJSONEncoder writes one JSON object per line.
type recordJSONEncoder struct {
	enc *json.Encoder
}

func newRecordJSONEncoder(w io.Writer) *recordJSONEncoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &recordJSONEncoder{enc: enc}
}

func (e *recordJSONEncoder) encode(r *kgo.Record) error {
	jr := jsonRecord{
		Topic:     r.Topic,
		Partition: r.Partition,
		Offset:    r.Offset,
		Timestamp: r.Timestamp.UnixMilli(),
		Headers:   make([]jsonHeader, len(r.Headers)),
	}
	jr.Key, jr.KeyEncoding = jsonBytes(r.Key)
	jr.Value, jr.ValueEncoding = jsonBytes(r.Value)
	for i, h := range r.Headers {
		jr.Headers[i].Key = h.Key
		v, enc := jsonBytes(h.Value)
		if v != nil {
			jr.Headers[i].Value = *v
		}
		jr.Headers[i].ValueEncoding = enc
	}
	return e.enc.Encode(&jr)
}

// jsonDecodedRecord is one line of consume --json when keys or values
// are decoded with their schemas: a decoded key or value is a JSON value,
// its schema ID beside it.
type jsonDecodedRecord struct {
	Topic         string       `json:"topic"`
	Partition     int32        `json:"partition"`
	Offset        int64        `json:"offset"`
	Timestamp     int64        `json:"timestamp"`
	Key           any          `json:"key"`
	KeyEncoding   string       `json:"key_encoding,omitempty"`
	KeySchemaID   int          `json:"key_schema_id,omitempty"`
	Value         any          `json:"value"`
	ValueEncoding string       `json:"value_encoding,omitempty"`
	ValueSchemaID int          `json:"value_schema_id,omitempty"`
	Headers       []jsonHeader `json:"headers"`
}

// encodeDecoded writes r with key and value decoded where they are not
// nil; without either it is encode.
func (e *recordJSONEncoder) encodeDecoded(r *kgo.Record, key, value *decodedPart) error {
	if key == nil && value == nil {
		return e.encode(r)
	}
	jr := jsonDecodedRecord{
		Topic:     r.Topic,
		Partition: r.Partition,
		Offset:    r.Offset,
		Timestamp: r.Timestamp.UnixMilli(),
		Headers:   make([]jsonHeader, len(r.Headers)),
	}
	part := func(d *decodedPart, raw []byte, v *any, enc *string, id *int) {
		if d != nil {
			*v, *id = json.RawMessage(d.json), d.id
			return
		}
		s, encoding := jsonBytes(raw)
		if s != nil {
			*v = *s
		}
		*enc = encoding
	}
	part(key, r.Key, &jr.Key, &jr.KeyEncoding, &jr.KeySchemaID)
	part(value, r.Value, &jr.Value, &jr.ValueEncoding, &jr.ValueSchemaID)
	for i, h := range r.Headers {
		jr.Headers[i].Key = h.Key
		v, enc := jsonBytes(h.Value)
		if v != nil {
			jr.Headers[i].Value = *v
		}
		jr.Headers[i].ValueEncoding = enc
	}
	return e.enc.Encode(&jr)
}

// jsonBytes renders b for a JSON string: nil for nil, the text when it is
// valid UTF-8, else base64 and the encoding's name.
func jsonBytes(b []byte) (*string, string) {
	switch {
	case b == nil:
		return nil, ""
	case utf8.Valid(b):
		s := string(b)
		return &s, ""
	}
	s := base64.StdEncoding.EncodeToString(b)
	return &s, "base64"
}
