package schema

// Avro's schema resolution rules as Java's SchemaCompatibility applies
// them, which is what Confluent's AvroSchema.isBackwardCompatible runs:
// the same kinds, the same JSON-pointer locations into the reader schema
// and the same messages, so a registry answer lists what Confluent's
// would. hamba/avro has a checker too, but it stops at the first problem
// and reports neither kind nor location.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hamba/avro/v2"
)

// The kinds, Avro's SchemaIncompatibilityType names.
const (
	avroNameMismatch              = "NAME_MISMATCH"
	avroFixedSizeMismatch         = "FIXED_SIZE_MISMATCH"
	avroMissingEnumSymbols        = "MISSING_ENUM_SYMBOLS"
	avroReaderFieldMissingDefault = "READER_FIELD_MISSING_DEFAULT_VALUE"
	avroTypeMismatch              = "TYPE_MISMATCH"
	avroMissingUnionBranch        = "MISSING_UNION_BRANCH"
)

func canReadAvro(reader, writer Schema) []Incompatibility {
	r, ok1 := reader.(*avroSchema)
	w, ok2 := writer.(*avroSchema)
	if !ok1 || !ok2 {
		return []Incompatibility{{Kind: avroTypeMismatch, Path: "/", Message: "not Avro schemas"}}
	}
	c := &avroChecker{memo: map[avroPair]*avroResult{}}
	return c.check(nil, "", r.parsed, w.parsed)
}

type avroPair struct{ reader, writer avro.Schema }

// avroResult is a pair's outcome; inProgress marks a pair being checked
// further up the stack.
type avroResult struct {
	inProgress bool
	incs       []Incompatibility
}

// avroChecker walks a reader and a writer schema together. Its memo is
// what ends recursion: a pair met again while still being checked is
// taken as compatible (Avro's rule: compatible unless proven otherwise),
// and a pair checked before gives its earlier answer, locations included,
// as in Java.
type avroChecker struct {
	memo map[avroPair]*avroResult
}

// check pushes token onto loc and checks the pair there. loc is the path
// so far, without Java's root token; a nil loc with token "" is a fresh
// root, as Java's getCompatibility(reader, writer) starts one.
func (c *avroChecker) check(loc []string, token string, reader, writer avro.Schema) []Incompatibility {
	if token != "" {
		loc = append(loc[:len(loc):len(loc)], token)
	}
	reader, writer = avroDeref(reader), avroDeref(writer)
	p := avroPair{reader, writer}
	if r, ok := c.memo[p]; ok {
		if r.inProgress {
			return nil
		}
		return r.incs
	}
	r := &avroResult{inProgress: true}
	c.memo[p] = r
	incs := c.calculate(loc, reader, writer)
	c.memo[p] = &avroResult{incs: incs}
	return incs
}

func (c *avroChecker) calculate(loc []string, reader, writer avro.Schema) []Incompatibility {
	rt, wt := avroKind(reader), avroKind(writer)
	if rt == wt {
		switch rt {
		case avro.Array:
			return c.check(loc, "items", reader.(*avro.ArraySchema).Items(), writer.(*avro.ArraySchema).Items())
		case avro.Map:
			return c.check(loc, "values", reader.(*avro.MapSchema).Values(), writer.(*avro.MapSchema).Values())
		case avro.Fixed:
			incs := avroCheckNames(loc, reader, writer)
			rs, ws := reader.(*avro.FixedSchema).Size(), writer.(*avro.FixedSchema).Size()
			if rs != ws {
				incs = append(incs, avroIncompatible(loc, "size", avroFixedSizeMismatch, fmt.Sprintf("expected: %d, found: %d", ws, rs)))
			}
			return incs
		case avro.Enum:
			return append(avroCheckNames(loc, reader, writer), avroCheckSymbols(loc, reader.(*avro.EnumSchema), writer.(*avro.EnumSchema))...)
		case avro.Record:
			return append(avroCheckNames(loc, reader, writer), c.checkFields(loc, reader.(*avro.RecordSchema), writer.(*avro.RecordSchema))...)
		case avro.Union:
			// Every branch the writer may have used must be readable.
			var incs []Incompatibility
			for i, wb := range writer.(*avro.UnionSchema).Types() {
				if len(c.check(nil, "", reader, wb)) > 0 {
					incs = append(incs, avroIncompatible(loc, fmt.Sprint(i), avroMissingUnionBranch,
						"reader union lacking writer type: "+avroTypeName(wb)))
				}
			}
			return incs
		}
		return nil // the same primitive
	}

	// A writer union is readable when each of its branches is.
	if wt == avro.Union {
		var incs []Incompatibility
		for i, wb := range writer.(*avro.UnionSchema).Types() {
			incs = append(incs, c.check(loc, fmt.Sprint(i), reader, wb)...)
		}
		return incs
	}
	switch rt {
	case avro.Long:
		if wt == avro.Int {
			return nil
		}
	case avro.Float:
		if wt == avro.Int || wt == avro.Long {
			return nil
		}
	case avro.Double:
		if wt == avro.Int || wt == avro.Long || wt == avro.Float {
			return nil
		}
	case avro.Bytes:
		if wt == avro.String {
			return nil
		}
	case avro.String:
		if wt == avro.Bytes {
			return nil
		}
	case avro.Union:
		// A reader union reads a writer's value when one branch can.
		for _, rb := range reader.(*avro.UnionSchema).Types() {
			if len(c.check(nil, "", rb, writer)) == 0 {
				return nil
			}
		}
		return []Incompatibility{avroIncompatible(loc, "", avroMissingUnionBranch, "reader union lacking writer type: "+avroTypeName(writer))}
	}
	return []Incompatibility{avroIncompatible(loc, "", avroTypeMismatch,
		fmt.Sprintf("reader type: %s not compatible with writer type: %s", avroTypeName(reader), avroTypeName(writer)))}
}

// checkFields checks that every reader field is filled: from the writer
// field of its name or one of its aliases, else from its default.
func (c *avroChecker) checkFields(loc []string, reader, writer *avro.RecordSchema) []Incompatibility {
	var incs []Incompatibility
	floc := append(loc[:len(loc):len(loc)], "fields")
	for i, rf := range reader.Fields() {
		at := append(floc[:len(floc):len(floc)], fmt.Sprint(i))
		wf := avroWriterField(writer, rf)
		switch {
		case wf != nil:
			incs = append(incs, c.check(at, "type", rf.Type(), wf.Type())...)
		case rf.HasDefault():
		case avroEnumWithDefault(rf.Type()):
			// Java checks the enum against the writer record itself,
			// which reports a type mismatch; kept for the same answer.
			incs = append(incs, c.check(at, "type", rf.Type(), writer)...)
		default:
			incs = append(incs, avroIncompatible(at, "", avroReaderFieldMissingDefault, rf.Name()))
		}
	}
	return incs
}

// avroWriterField finds the writer field a reader field reads: by name,
// else by the reader field's aliases. Java throws when more than one
// matches; the name match wins here.
func avroWriterField(writer *avro.RecordSchema, rf *avro.Field) *avro.Field {
	names := append([]string{rf.Name()}, rf.Aliases()...)
	for _, n := range names {
		for _, wf := range writer.Fields() {
			if wf.Name() == n {
				return wf
			}
		}
	}
	return nil
}

func avroEnumWithDefault(s avro.Schema) bool {
	e, ok := avroDeref(s).(*avro.EnumSchema)
	return ok && e.HasDefault()
}

// avroCheckNames compares named types by their short names, as Java's
// schemaNameEquals does (a namespace change alone is compatible), or
// through the reader's aliases, which are full names.
func avroCheckNames(loc []string, reader, writer avro.Schema) []Incompatibility {
	rn, wn := reader.(avro.NamedSchema), writer.(avro.NamedSchema)
	if rn.Name() == wn.Name() || slices.Contains(rn.Aliases(), wn.FullName()) {
		return nil
	}
	return []Incompatibility{avroIncompatible(loc, "name", avroNameMismatch, "expected: "+wn.FullName())}
}

// avroCheckSymbols requires every writer symbol in the reader, unless
// the reader enum has a default to read unknown symbols as.
func avroCheckSymbols(loc []string, reader, writer *avro.EnumSchema) []Incompatibility {
	var missing []string
	for _, s := range writer.Symbols() {
		if !slices.Contains(reader.Symbols(), s) {
			missing = append(missing, s)
		}
	}
	if len(missing) == 0 || reader.HasDefault() {
		return nil
	}
	slices.Sort(missing)
	missing = slices.Compact(missing)
	// Java prints the missing symbols as a sorted set: [A, B].
	return []Incompatibility{avroIncompatible(loc, "symbols", avroMissingEnumSymbols, "["+strings.Join(missing, ", ")+"]")}
}

// avroIncompatible records one incompatibility at loc plus token, the
// path rendered as Java's Incompatibility.getLocation: a JSON pointer.
func avroIncompatible(loc []string, token, kind, message string) Incompatibility {
	if token != "" {
		loc = append(loc[:len(loc):len(loc)], token)
	}
	var b strings.Builder
	b.WriteByte('/')
	for i, t := range loc {
		if i > 0 {
			b.WriteByte('/')
		}
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	return Incompatibility{Kind: kind, Path: b.String(), Message: message}
}

// avroDeref is the named type behind a reference to it.
func avroDeref(s avro.Schema) avro.Schema {
	if r, ok := s.(*avro.RefSchema); ok {
		return r.Schema()
	}
	return s
}

// avroKind is s's type with references resolved and error records as
// records, as Java's Schema.Type has them.
func avroKind(s avro.Schema) avro.Type {
	t := avroDeref(s).Type()
	if t == avro.Error {
		return avro.Record
	}
	return t
}

// avroTypeName is how Java prints a Schema.Type in messages: upper case.
func avroTypeName(s avro.Schema) string {
	return strings.ToUpper(string(avroKind(s)))
}
