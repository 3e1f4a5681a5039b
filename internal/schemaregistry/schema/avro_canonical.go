package schema

// The canonical text of an Avro schema: what Java's Schema.toString
// writes, which is what Confluent's registry stores and compares (its
// AvroSchema.canonicalString). Written from the request's JSON after
// hamba has validated it, so the walk can assume a well-formed schema and
// only has to track namespaces the way Java resolves them.
//
// Java's layout, per kind:
//
//	record  type, name, namespace, doc, fields, props, aliases
//	field   name, type, doc, default, order, aliases, props
//	enum    type, name, namespace, doc, symbols, default, props, aliases
//	fixed   type, name, namespace, doc, size, props, aliases
//	array   type, items, props      map  type, values, props
//	other   "int", or {"type":"int", props} when it has props
//
// namespace is written only where it differs from the enclosing one; a
// name or alias in the enclosing namespace is written short. Java keeps
// custom properties and default objects in the order the request gave;
// Samsa sorts them (logicalType, precision and scale first, as Avro
// writers and Confluent's normalizer put them) so that two texts that
// differ only in attribute order get one canonical text.

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

var (
	avroSchemaReserved = []string{"doc", "fields", "items", "name", "namespace", "size", "symbols", "values", "type", "aliases"}
	avroEnumReserved   = append(slices.Clone(avroSchemaReserved), "default")
	avroFieldReserved  = []string{"default", "doc", "name", "order", "type", "aliases"}
	avroPrimitives     = []string{"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
	// avroTypeNames are the names Java writes in full even inside their
	// own namespace, so they cannot be read as a type keyword.
	avroTypeNames = append(slices.Clone(avroPrimitives), "record", "enum", "array", "map", "union", "fixed")
)

// avroWriter writes one schema's canonical (or normalized) text.
type avroWriter struct {
	b strings.Builder
	// normalize applies what Confluent's AvroSchema.normalize changes once
	// its output is parsed again and written: aliases sorted and
	// deduplicated, an empty doc of a named type dropped, a whole-number
	// default of a float or double field written as a double.
	normalize bool
	// defs, when set, are the named types of the schema's references by
	// full name: a name of one is written as its definition where first
	// met, as Java's Schema.toString does for Confluent's resolved
	// format. written holds the names already defined in the text.
	defs    map[string]avroDef
	written map[string]bool
}

func writeAvroJSON(doc any, normalize bool) (string, error) {
	w := &avroWriter{normalize: normalize}
	if err := w.schema(doc, ""); err != nil {
		return "", err
	}
	return w.b.String(), nil
}

// schema writes v, a schema, inside namespace ns.
func (w *avroWriter) schema(v any, ns string) error {
	switch t := v.(type) {
	case string:
		if slices.Contains(avroPrimitives, t) {
			w.str(t)
			return nil
		}
		full := avroFullName(t, ns)
		if def, ok := w.referenced(full, t); ok {
			return w.named(def.typ, def.inNamespace(), ns)
		}
		w.str(avroQualified(full, ns))
		return nil
	case []any:
		w.b.WriteByte('[')
		for i, branch := range t {
			if i > 0 {
				w.b.WriteByte(',')
			}
			if err := w.schema(branch, ns); err != nil {
				return err
			}
		}
		w.b.WriteByte(']')
		return nil
	case map[string]any:
		return w.object(t, ns)
	}
	return fmt.Errorf("not a schema: %v", v)
}

func (w *avroWriter) object(m map[string]any, ns string) error {
	typ, ok := m["type"].(string)
	if !ok {
		// {"type": [...]} or {"type": {...}}: the inner schema, as hamba
		// and Java read it.
		return w.schema(m["type"], ns)
	}
	switch typ {
	case "record", "error", "enum", "fixed":
		return w.named(typ, m, ns)
	case "array", "map":
		key := "items"
		if typ == "map" {
			key = "values"
		}
		if _, ok := m[key]; !ok {
			return fmt.Errorf("%s without %s", typ, key)
		}
		w.b.WriteString(`{"type":`)
		w.str(typ)
		w.b.WriteString(`,"` + key + `":`)
		if err := w.schema(m[key], ns); err != nil {
			return err
		}
		if err := w.props(m, avroSchemaReserved); err != nil {
			return err
		}
		w.b.WriteByte('}')
		return nil
	}
	if !slices.Contains(avroPrimitives, typ) {
		// A reference in object form: Java resolves it to the named
		// type, whose name is all it writes.
		return w.schema(typ, ns)
	}
	if len(avroPropKeys(m, avroSchemaReserved)) == 0 {
		w.str(typ)
		return nil
	}
	w.b.WriteString(`{"type":`)
	w.str(typ)
	if err := w.props(m, avroSchemaReserved); err != nil {
		return err
	}
	w.b.WriteByte('}')
	return nil
}

// named writes a record, error, enum or fixed defined at this point.
func (w *avroWriter) named(typ string, m map[string]any, ns string) error {
	// hamba matches attribute names without regard to case; Java, and
	// so Confluent, does not: refuse what Java would.
	name, _ := m["name"].(string)
	if name == "" {
		return fmt.Errorf("%s without a name", typ)
	}
	if err := avroRequire(m, typ, name); err != nil {
		return err
	}
	space := ns
	if s, ok := m["namespace"].(string); ok {
		space = s
	}
	full := avroFullName(name, space)
	space, short := avroSplitName(full)
	if w.written != nil {
		w.written[full] = true
	}

	w.b.WriteString(`{"type":`)
	w.str(typ)
	w.b.WriteString(`,"name":`)
	w.str(short)
	if space != ns {
		w.b.WriteString(`,"namespace":`)
		w.str(space)
	}
	if doc, ok := m["doc"].(string); ok && (doc != "" || !w.normalize) {
		w.b.WriteString(`,"doc":`)
		w.str(doc)
	}
	reserved := avroSchemaReserved
	switch typ {
	case "record", "error":
		fields, _ := m["fields"].([]any)
		w.b.WriteString(`,"fields":[`)
		for i, f := range fields {
			if i > 0 {
				w.b.WriteByte(',')
			}
			fm, _ := f.(map[string]any)
			if err := w.field(fm, space); err != nil {
				return err
			}
		}
		w.b.WriteByte(']')
	case "enum":
		reserved = avroEnumReserved
		w.b.WriteString(`,"symbols":`)
		if err := w.value(m["symbols"]); err != nil {
			return err
		}
		if def, ok := m["default"].(string); ok {
			w.b.WriteString(`,"default":`)
			w.str(def)
		}
	case "fixed":
		w.b.WriteString(`,"size":`)
		if err := w.value(m["size"]); err != nil {
			return err
		}
	}
	if err := w.props(m, reserved); err != nil {
		return err
	}
	if aliases := avroStrings(m["aliases"]); len(aliases) > 0 {
		full := make([]string, len(aliases))
		for i, a := range aliases {
			full[i] = avroFullName(a, space)
		}
		if w.normalize {
			slices.Sort(full)
			full = slices.Compact(full)
		}
		w.b.WriteString(`,"aliases":[`)
		for i, a := range full {
			if i > 0 {
				w.b.WriteByte(',')
			}
			w.str(avroQualified(a, space))
		}
		w.b.WriteByte(']')
	}
	w.b.WriteByte('}')
	return nil
}

// avroRequire checks that a named type has, under its exact name, the
// attribute its kind requires.
func avroRequire(m map[string]any, typ, name string) error {
	switch typ {
	case "record", "error":
		if _, ok := m["fields"].([]any); !ok {
			return fmt.Errorf("%s %s without fields", typ, name)
		}
	case "enum":
		if _, ok := m["symbols"].([]any); !ok {
			return fmt.Errorf("enum %s without symbols", name)
		}
	case "fixed":
		n, ok := m["size"].(json.Number)
		if _, err := n.Int64(); !ok || err != nil {
			return fmt.Errorf("fixed %s without an integer size", name)
		}
	}
	return nil
}

func (w *avroWriter) field(m map[string]any, ns string) error {
	name, _ := m["name"].(string)
	if name == "" {
		return errors.New("record field without a name")
	}
	if _, ok := m["type"]; !ok {
		return fmt.Errorf("field %s without a type", name)
	}
	w.b.WriteString(`{"name":`)
	w.str(name)
	w.b.WriteString(`,"type":`)
	if err := w.schema(m["type"], ns); err != nil {
		return err
	}
	if doc, ok := m["doc"].(string); ok {
		w.b.WriteString(`,"doc":`)
		w.str(doc)
	}
	if def, ok := m["default"]; ok {
		w.b.WriteString(`,"default":`)
		if n, isNum := def.(json.Number); isNum && w.normalize && avroIsFloating(m["type"]) {
			f, err := n.Float64()
			if err != nil {
				return err
			}
			w.b.WriteString(javaDouble(f))
		} else if err := w.value(def); err != nil {
			return err
		}
	}
	if order, ok := m["order"].(string); ok && order != "ascending" {
		w.b.WriteString(`,"order":`)
		w.str(order)
	}
	if aliases := avroStrings(m["aliases"]); len(aliases) > 0 {
		if w.normalize {
			aliases = slices.Compact(slices.Sorted(slices.Values(aliases)))
		}
		w.b.WriteString(`,"aliases":`)
		if err := w.value(aliases); err != nil {
			return err
		}
	}
	if err := w.props(m, avroFieldReserved); err != nil {
		return err
	}
	w.b.WriteByte('}')
	return nil
}

// props writes m's custom properties: those not reserved for its kind.
func (w *avroWriter) props(m map[string]any, reserved []string) error {
	for _, k := range avroPropKeys(m, reserved) {
		w.b.WriteByte(',')
		w.str(k)
		w.b.WriteByte(':')
		if err := w.value(m[k]); err != nil {
			return err
		}
	}
	return nil
}

// avroPropKeys are m's custom property names in canonical order.
func avroPropKeys(m map[string]any, reserved []string) []string {
	var keys []string
	for k := range m {
		if !slices.Contains(reserved, k) {
			keys = append(keys, k)
		}
	}
	first := map[string]int{"logicalType": 1, "precision": 2, "scale": 3}
	slices.SortFunc(keys, func(a, b string) int {
		fa, fb := first[a], first[b]
		switch {
		case fa != 0 && fb != 0:
			return fa - fb
		case fa != 0:
			return -1
		case fb != 0:
			return 1
		}
		return strings.Compare(a, b)
	})
	return keys
}

// value writes a JSON value (a default, a property) as Jackson would:
// compact, numbers as Java prints them, object keys sorted.
func (w *avroWriter) value(v any) error {
	switch t := v.(type) {
	case nil:
		w.b.WriteString("null")
	case bool:
		w.b.WriteString(strconv.FormatBool(t))
	case string:
		w.str(t)
	case json.Number:
		s, err := javaNumber(t)
		if err != nil {
			return err
		}
		w.b.WriteString(s)
	case []string:
		w.b.WriteByte('[')
		for i, s := range t {
			if i > 0 {
				w.b.WriteByte(',')
			}
			w.str(s)
		}
		w.b.WriteByte(']')
	case []any:
		w.b.WriteByte('[')
		for i, e := range t {
			if i > 0 {
				w.b.WriteByte(',')
			}
			if err := w.value(e); err != nil {
				return err
			}
		}
		w.b.WriteByte(']')
	case map[string]any:
		w.b.WriteByte('{')
		for i, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range t {
				if !yield(k) {
					return
				}
			}
		}) {
			if i > 0 {
				w.b.WriteByte(',')
			}
			w.str(k)
			w.b.WriteByte(':')
			if err := w.value(t[k]); err != nil {
				return err
			}
		}
		w.b.WriteByte('}')
	default:
		return fmt.Errorf("unexpected JSON value %T", v)
	}
	return nil
}

// str writes s as a JSON string the way Jackson escapes it: quote,
// backslash and control characters only; non-ASCII text stays as is.
func (w *avroWriter) str(s string) {
	const hex = "0123456789ABCDEF"
	w.b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			w.b.WriteString(`\"`)
		case '\\':
			w.b.WriteString(`\\`)
		case '\b':
			w.b.WriteString(`\b`)
		case '\f':
			w.b.WriteString(`\f`)
		case '\n':
			w.b.WriteString(`\n`)
		case '\r':
			w.b.WriteString(`\r`)
		case '\t':
			w.b.WriteString(`\t`)
		default:
			if r < 0x20 {
				w.b.WriteString(`\u00`)
				w.b.WriteByte(hex[r>>4])
				w.b.WriteByte(hex[r&0xF])
			} else {
				w.b.WriteRune(r)
			}
		}
	}
	w.b.WriteByte('"')
}

// javaNumber prints a JSON number as Jackson prints the node it parsed:
// integers as integers, anything with a fraction or exponent as a double.
func javaNumber(n json.Number) (string, error) {
	s := n.String()
	if !strings.ContainsAny(s, ".eE") {
		i, ok := new(big.Int).SetString(s, 10)
		if !ok {
			return "", fmt.Errorf("invalid number %s", s)
		}
		return i.String(), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return "", fmt.Errorf("invalid number %s", s)
	}
	return javaDouble(f), nil
}

// javaDouble is Java's Double.toString: plain notation with at least one
// fractional digit for magnitudes in [1e-3, 1e7), otherwise d.dddEn.
func javaDouble(f float64) string {
	if f == 0 {
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	if a := math.Abs(f); a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // 1.5e+07
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

// avroIsFloating reports whether a field of type t reads its default as
// a float or double (a union's default is of its first branch).
func avroIsFloating(t any) bool {
	switch v := t.(type) {
	case string:
		return v == "float" || v == "double"
	case []any:
		return len(v) > 0 && avroIsFloating(v[0])
	case map[string]any:
		return avroIsFloating(v["type"])
	}
	return false
}

// avroFullName resolves name in namespace ns as Java does: a dotted name
// is already full.
func avroFullName(name, ns string) string {
	if strings.Contains(name, ".") || ns == "" {
		return name
	}
	return ns + "." + name
}

// avroSplitName splits a full name into namespace and short name.
func avroSplitName(full string) (space, short string) {
	if i := strings.LastIndexByte(full, '.'); i >= 0 {
		return full[:i], full[i+1:]
	}
	return "", full
}

// avroQualified is how Java writes full inside namespace ns: short when
// it is in ns, unless the short name is a type keyword.
func avroQualified(full, ns string) string {
	space, short := avroSplitName(full)
	if space == ns && !slices.Contains(avroTypeNames, short) {
		return short
	}
	return full
}

func avroStrings(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, e := range l {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
