package schema

// JSON Schema, as Confluent's JsonSchemaProvider handles it:
//
//   - Parse compiles the schema with santhosh-tekuri/jsonschema (drafts 4,
//     6, 7, 2019-09, 2020-12, chosen by $schema). Without $schema the draft
//     is 7, Confluent's default (JsonSchema.rawSchema starts from
//     SpecificationVersion.DRAFT_7). The compiler's loader refuses every
//     URL: a schema reaches other schemas only through the registry's
//     references, each added as a resource under its Name (the URL the
//     referring schema's $ref uses), as Confluent's JsonSchema does.
//   - Canonical is the text re-encoded compactly with object keys in the
//     order given, as Confluent's canonicalString (Jackson keeps the order).
//     Keeping the order is deliberate: it gives the ids Confluent would give
//     (two texts differing in key order are two schemas unless the request
//     sets normalize=true) and returns a schema the way it was registered.
//   - Normalized is the same with object keys sorted, as Confluent's
//     normalize (Jackson with ORDER_MAP_ENTRIES_BY_KEYS).
//
// The compatibility rules are in jsonschema_diff.go.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

var _ = register(JSON, parseJSON, canReadJSON)

// jsonRootURL is where the schema itself sits for the compiler: relative
// $refs resolve against it, as against Confluent's base mem://input.
const jsonRootURL = "mem://input/schema.json"

type jsonSchema struct {
	canonical  string
	normalized string
	refs       []Ref
	compiled   *jsonschema.Schema
	// docs holds each document the compiler saw, by URL, so the checker
	// can tell two subschemas apart by their text.
	docs map[string]any
}

func (s *jsonSchema) Type() Type         { return JSON }
func (s *jsonSchema) Canonical() string  { return s.canonical }
func (s *jsonSchema) Normalized() string { return s.normalized }
func (s *jsonSchema) References() []Ref  { return s.refs }

func parseJSON(text string, refs []Ref) (Schema, error) {
	tree, err := decodeOrdered(text)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	switch tree.(type) {
	case *orderedObject, bool:
	default:
		return nil, fmt.Errorf("%w: a JSON schema must be an object or a boolean", ErrInvalid)
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	c.UseLoader(refusingLoader{})
	docs := map[string]any{jsonRootURL: doc}
	bases := []string{jsonRootURL}
	if m, ok := doc.(map[string]any); ok {
		// A relative $ref resolves against the root's $id when it has one.
		if id, ok := m["$id"].(string); ok && isAbsoluteURL(id) {
			bases = append(bases, id)
		} else if id, ok := m["id"].(string); ok && isAbsoluteURL(id) {
			bases = append(bases, id)
		}
	}
	for _, r := range refs {
		if r.Type != "" && r.Type != JSON {
			return nil, fmt.Errorf("%w: reference %q is a %s schema; a JSON schema can reference only JSON schemas", ErrInvalid, r.Name, r.Type)
		}
		rdoc, err := jsonschema.UnmarshalJSON(strings.NewReader(r.Schema))
		if err != nil {
			return nil, fmt.Errorf("%w: reference %q (subject %s version %d): %v", ErrInvalid, r.Name, r.Subject, r.Version, err)
		}
		for _, u := range refURLs(r.Name, bases) {
			if _, dup := docs[u]; dup {
				continue
			}
			if err := c.AddResource(u, rdoc); err != nil {
				return nil, fmt.Errorf("%w: reference %q: %v", ErrInvalid, r.Name, err)
			}
			docs[u] = rdoc
		}
	}
	if err := c.AddResource(jsonRootURL, doc); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	compiled, err := c.Compile(jsonRootURL)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	var canon, norm strings.Builder
	encodeJackson(&canon, tree, false)
	encodeJackson(&norm, tree, true)
	return &jsonSchema{
		canonical:  canon.String(),
		normalized: norm.String(),
		refs:       refs,
		compiled:   compiled,
		docs:       docs,
	}, nil
}

// refURLs lists the URLs a reference named name answers to: the name
// itself when absolute, else the name resolved against each base (the
// root's mem://input location and its $id), as Confluent registers a
// reference both as given and resolved against its base.
func refURLs(name string, bases []string) []string {
	if isAbsoluteURL(name) {
		return []string{strings.TrimSuffix(name, "#")}
	}
	var out []string
	for _, b := range bases {
		bu, err := url.Parse(b)
		if err != nil {
			continue
		}
		ru, err := url.Parse(name)
		if err != nil {
			continue
		}
		r := bu.ResolveReference(ru)
		r.Fragment = ""
		out = append(out, r.String())
	}
	return out
}

func isAbsoluteURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Scheme != "" && len(u.Scheme) > 1 // a one-letter scheme is a Windows drive
}

// refusingLoader is the compiler's only loader: anything not added as a
// resource (the draft meta-schemas are built in) is refused, file and
// http URLs included, so parsing never reads the disk or the network.
type refusingLoader struct{}

func (refusingLoader) Load(u string) (any, error) {
	return nil, fmt.Errorf("$ref %q is not one of the schema's references: a JSON schema may reach other schemas only through references to registered subjects, never by file or network URL", u)
}

// orderedObject is a JSON object that remembers its keys' order, which
// Canonical keeps. A repeated key keeps its first position and last value,
// as Jackson's tree does.
type orderedObject struct {
	keys []string
	vals map[string]any
}

// decodeOrdered decodes text into bools, nil, strings, json.Number,
// []any and *orderedObject, refusing trailing data.
func decodeOrdered(text string) (any, error) {
	if strings.TrimSpace(text) == "" {
		return nil, fmt.Errorf("empty schema text")
	}
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	v, err := decodeValue(d)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, fmt.Errorf("unexpected data after the schema's JSON value")
	}
	return v, nil
}

func decodeValue(d *json.Decoder) (any, error) {
	t, err := d.Token()
	if err != nil {
		if err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	switch t := t.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &orderedObject{vals: map[string]any{}}
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return nil, err
				}
				k := kt.(string)
				v, err := decodeValue(d)
				if err != nil {
					return nil, err
				}
				if _, dup := o.vals[k]; !dup {
					o.keys = append(o.keys, k)
				}
				o.vals[k] = v
			}
			if _, err := d.Token(); err != nil {
				return nil, err
			}
			return o, nil
		case '[':
			a := []any{}
			for d.More() {
				v, err := decodeValue(d)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			if _, err := d.Token(); err != nil {
				return nil, err
			}
			return a, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return t, nil
	}
}

// encodeJackson writes v compactly, escaping strings as Jackson does
// (only quote, backslash and control characters; no HTML escaping).
// sorted orders object keys, as Confluent's normalized form.
func encodeJackson(b *strings.Builder, v any, sorted bool) {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if v {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case json.Number:
		b.WriteString(v.String())
	case string:
		writeJacksonString(b, v)
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			encodeJackson(b, e, sorted)
		}
		b.WriteByte(']')
	case *orderedObject:
		keys := v.keys
		if sorted {
			keys = append([]string(nil), keys...)
			sort.Strings(keys)
		}
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJacksonString(b, k)
			b.WriteByte(':')
			encodeJackson(b, v.vals[k], sorted)
		}
		b.WriteByte('}')
	}
}

func writeJacksonString(b *strings.Builder, s string) {
	const hex = "0123456789ABCDEF"
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte(hex[r>>4])
			b.WriteByte(hex[r&0xF])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
}

// jsonKey is a value's text with keys sorted and numbers compared by
// value, to tell enum values and subschemas apart as Confluent's
// equality of JSON trees does.
func jsonKey(v any) string {
	var buf bytes.Buffer
	writeKey(&buf, v)
	return buf.String()
}

func writeKey(b *bytes.Buffer, v any) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			b.Write(kb)
			b.WriteByte(':')
			writeKey(b, v[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			writeKey(b, e)
		}
		b.WriteByte(']')
	case json.Number:
		if r, ok := ratOf(v); ok {
			b.WriteString(r.RatString())
		} else {
			b.WriteString(v.String())
		}
	default:
		vb, _ := json.Marshal(v)
		b.Write(vb)
	}
}
