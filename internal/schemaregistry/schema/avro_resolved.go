package schema

// Confluent's resolved format of an Avro schema (format=resolved): Java's
// Schema.toString() of the parsed schema, in which the named types the
// schema takes from its references are written out where first used
// instead of by name, so the text stands alone.

import (
	"fmt"
	"strings"
)

// avroDef is a named type's definition in a reference: its JSON object,
// its kind and the namespace it is defined in.
type avroDef struct {
	typ string
	m   map[string]any
	ns  string
}

// inNamespace is the definition with its namespace spelled out, so that
// written elsewhere it keeps its full name.
func (d avroDef) inNamespace() map[string]any {
	m := make(map[string]any, len(d.m)+1)
	for k, v := range d.m {
		m[k] = v
	}
	name, _ := d.m["name"].(string)
	space, _ := avroSplitName(avroFullName(name, d.ns))
	if s, ok := d.m["namespace"].(string); ok && !strings.Contains(name, ".") {
		space = s
	}
	m["namespace"] = space
	return m
}

// referenced finds the reference definition a name written at this point
// stands for, unless it is already defined in the text: full as resolved
// in the enclosing namespace, else the name as written (Java's fallback
// to the null namespace).
func (w *avroWriter) referenced(full, written string) (avroDef, bool) {
	if w.defs == nil {
		return avroDef{}, false
	}
	for _, n := range []string{full, written} {
		if w.written[n] {
			return avroDef{}, false
		}
		if def, ok := w.defs[n]; ok {
			return def, true
		}
	}
	return avroDef{}, false
}

// AvroResolved is s's text with its references' named types written out,
// Confluent's format=resolved; ok is false when s is not Avro.
func AvroResolved(s Schema) (text string, ok bool, err error) {
	as, ok := s.(*avroSchema)
	if !ok {
		return "", false, nil
	}
	defs := map[string]avroDef{}
	for _, r := range as.refs {
		doc, err := decodeAvroJSON(r.Schema)
		if err != nil {
			return "", true, fmt.Errorf("reference %q: %w", r.Name, err)
		}
		indexAvroDefs(doc, "", defs)
	}
	w := &avroWriter{defs: defs, written: map[string]bool{}}
	if err := w.schema(as.doc, ""); err != nil {
		return "", true, err
	}
	return w.b.String(), true, nil
}

// indexAvroDefs records every named type defined in v, a schema inside
// namespace ns, by full name.
func indexAvroDefs(v any, ns string, defs map[string]avroDef) {
	switch t := v.(type) {
	case []any:
		for _, branch := range t {
			indexAvroDefs(branch, ns, defs)
		}
	case map[string]any:
		typ, ok := t["type"].(string)
		if !ok {
			indexAvroDefs(t["type"], ns, defs)
			return
		}
		switch typ {
		case "array":
			indexAvroDefs(t["items"], ns, defs)
		case "map":
			indexAvroDefs(t["values"], ns, defs)
		case "record", "error", "enum", "fixed":
			name, _ := t["name"].(string)
			space := ns
			if s, ok := t["namespace"].(string); ok {
				space = s
			}
			full := avroFullName(name, space)
			if _, dup := defs[full]; !dup {
				defs[full] = avroDef{typ: typ, m: t, ns: ns}
			}
			inner, _ := avroSplitName(full)
			fields, _ := t["fields"].([]any)
			for _, f := range fields {
				if fm, ok := f.(map[string]any); ok {
					indexAvroDefs(fm["type"], inner, defs)
				}
			}
		}
	}
}
