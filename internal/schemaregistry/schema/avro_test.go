package schema

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func mustAvro(t *testing.T, text string, refs ...Ref) Schema {
	t.Helper()
	s, err := Parse(Avro, text, refs)
	if err != nil {
		t.Fatalf("parse %s: %v", text, err)
	}
	return s
}

func TestAvroParseInvalid(t *testing.T) {
	addr := Ref{Name: "com.acme.Address", Subject: "address", Version: 1, Type: Avro,
		Schema: `{"type":"record","name":"Address","namespace":"com.acme","fields":[{"name":"city","type":"string"}]}`}
	for _, tc := range []struct {
		name, text string
		refs       []Ref
		want       string
	}{
		{"bad JSON", `{"type":"record",`, nil, "invalid schema: invalid JSON: unexpected EOF"},
		{"not JSON at all", `string`, nil, "invalid schema: invalid JSON: invalid character 's'"},
		{"content after the schema", `"int" "long"`, nil, "invalid schema: invalid JSON: unexpected content after the schema"},
		{"unknown type", `{"type":"record","name":"R","fields":[{"name":"a","type":"integer"}]}`, nil, "invalid schema: unknown type: integer"},
		{"missing reference", `{"type":"record","name":"R","fields":[{"name":"a","type":"com.acme.Address"}]}`, nil, "invalid schema: unknown type: com.acme.Address"},
		{"record without fields", `{"type":"record","name":"R"}`, nil, "invalid schema: record must have an array of fields"},
		{"duplicate field", `{"type":"record","name":"R","fields":[{"name":"a","type":"int"},{"name":"a","type":"long"}]}`, nil, `invalid schema: duplicate field name "a"`},
		{"bad default", `{"type":"record","name":"R","fields":[{"name":"a","type":"int","default":"x"}]}`, nil, "invalid schema: invalid default for field a"},
		{"bad name", `{"type":"record","name":"1R","fields":[]}`, nil, `invalid schema: invalid name part "1R"`},
		{"bad reference", `"com.acme.Address"`, []Ref{{Name: "com.acme.Address", Subject: "address", Version: 1, Schema: `{"type":"record"}`}},
			`invalid schema: reference "com.acme.Address" (subject "address" version 1): `},
		{"reference of another format", `"int"`, []Ref{{Name: "other.json", Subject: "other", Version: 2, Type: JSON, Schema: `{}`}},
			`invalid schema: reference "other.json" (subject "other" version 2) is a JSON schema`},
		// hamba reads attribute names without regard to case; Java does not.
		{"attribute name in the wrong case", `{"type":"fixed","nAme":"F","size":4}`, nil, "invalid schema: fixed without a name"},
		{"reference used under the wrong name", `{"type":"record","name":"R","fields":[{"name":"a","type":"Address"}]}`, []Ref{addr}, "invalid schema: unknown type: Address"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(Avro, tc.text, tc.refs)
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("err = %q, want it to start with %q", err, tc.want)
			}
		})
	}
}

func TestAvroCanonical(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"primitive", `"string"`, `"string"`},
		{"primitive in object form", `{"type":"string"}`, `"string"`},
		{"primitive with a logical type", `{"logicalType":"timestamp-millis","type":"long"}`, `{"type":"long","logicalType":"timestamp-millis"}`},
		{"decimal", `{"scale":2,"type":"bytes","precision":9,"logicalType":"decimal"}`, `{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}`},
		// Confluent's AvroSchemaTest.testNormalization: attributes in
		// Java's order, docs kept with their escapes.
		{"confluent doc example",
			`{"type":"record","name":"myrecord","doc":"hi\"there","fields":[{"type":"string","name":"f1","doc":"bye\"now"}]}`,
			`{"type":"record","name":"myrecord","doc":"hi\"there","fields":[{"name":"f1","type":"string","doc":"bye\"now"}]}`},
		// Confluent's testNormalizationPreservesMetadataForPrimitiveTypes:
		// nested namespaces, props on primitives, a named-type reference.
		{"confluent debezium example",
			`{"connect.name":"some.scope.Envelope","fields":[{"default":null,"name":"before","type":["null",{"connect.name":"some.scope.Value","fields":[{"name":"created_at","type":{"connect.name":"io.debezium.time.Timestamp","connect.version":1,"type":"long"}},{"name":"normal_long","type":"long"}],"name":"Value","type":"record"}]},{"default":null,"name":"after","type":["null","Value"]}],"name":"Envelope","namespace":"some.scope","type":"record"}`,
			`{"type":"record","name":"Envelope","namespace":"some.scope","fields":[{"name":"before","type":["null",{"type":"record","name":"Value","fields":[{"name":"created_at","type":{"type":"long","connect.name":"io.debezium.time.Timestamp","connect.version":1}},{"name":"normal_long","type":"long"}],"connect.name":"some.scope.Value"}],"default":null},{"name":"after","type":["null","Value"],"default":null}],"connect.name":"some.scope.Envelope"}`},
		{"dotted name splits into namespace",
			`{"type":"record","name":"a.b.R","namespace":"ignored","fields":[]}`,
			`{"type":"record","name":"R","namespace":"a.b","fields":[]}`},
		{"nested type in another namespace, and back to the null one",
			`{"type":"record","name":"R","namespace":"n1","fields":[{"name":"a","type":{"type":"fixed","name":"n2.F","size":4}},{"name":"b","type":{"type":"enum","name":"E","namespace":"","symbols":["X"]}},{"name":"c","type":"n2.F"}]}`,
			`{"type":"record","name":"R","namespace":"n1","fields":[{"name":"a","type":{"type":"fixed","name":"F","namespace":"n2","size":4}},{"name":"b","type":{"type":"enum","name":"E","namespace":"","symbols":["X"]}},{"name":"c","type":"n2.F"}]}`},
		{"field attributes, aliases, order and props",
			`{"fields":[{"x-prop":{"b":1,"a":[1.50,2e3,1e-5]},"order":"descending","aliases":["old_a"],"default":{"k":"v"},"doc":"","type":{"type":"map","values":"string"},"name":"a"},{"name":"b","type":"int","order":"ascending","default":-0}],"aliases":["Old","other.Older"],"type":"record","name":"R","namespace":"n"}`,
			`{"type":"record","name":"R","namespace":"n","fields":[{"name":"a","type":{"type":"map","values":"string"},"doc":"","default":{"k":"v"},"order":"descending","aliases":["old_a"],"x-prop":{"a":[1.5,2000.0,1.0E-5],"b":1}},{"name":"b","type":"int","default":0}],"aliases":["Old","other.Older"]}`},
		{"enum with default and doc",
			`{"symbols":["A","B"],"default":"A","doc":"d","name":"E","type":"enum","aliases":["E0"]}`,
			`{"type":"enum","name":"E","doc":"d","symbols":["A","B"],"default":"A","aliases":["E0"]}`},
		{"array and union",
			`{"type":"array","items":["null",{"type":"string","avro.java.string":"String"}]}`,
			`{"type":"array","items":["null",{"type":"string","avro.java.string":"String"}]}`},
		{"recursive type", `{"type":"record","name":"Node","fields":[{"name":"next","type":["null","Node"],"default":null}]}`,
			`{"type":"record","name":"Node","fields":[{"name":"next","type":["null","Node"],"default":null}]}`},
		{"strings escaped as Jackson does", `{"type":"record","name":"R","doc":"tab\t<é>\u0001","fields":[]}`,
			"{\"type\":\"record\",\"name\":\"R\",\"doc\":\"tab\\t<é>\\u0001\",\"fields\":[]}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mustAvro(t, tc.text)
			if got := s.Canonical(); got != tc.want {
				t.Fatalf("canonical\n got %s\nwant %s", got, tc.want)
			}
			// The canonical text is a fixed point.
			if again := mustAvro(t, s.Canonical()).Canonical(); again != s.Canonical() {
				t.Fatalf("canonical of canonical\n got %s\nwant %s", again, s.Canonical())
			}
		})
	}
}

// TestAvroCanonicalStable: texts that differ only in whitespace or in the
// order of attributes are one schema to the registry.
func TestAvroCanonicalStable(t *testing.T) {
	texts := []string{
		`{"type":"record","name":"User","namespace":"com.acme","doc":"a user","fields":[{"name":"id","type":"long"},{"name":"tags","type":{"type":"array","items":"string"},"default":[]}],"x":1,"y":{"b":2,"a":1}}`,
		`{
		  "y": {"a": 1, "b": 2}, "x": 1,
		  "fields": [
		    {"type": "long", "name": "id"},
		    {"default": [], "name": "tags", "type": {"items": "string", "type": "array"}}
		  ],
		  "namespace": "com.acme", "doc": "a user", "name": "User", "type": "record"
		}`,
	}
	first := mustAvro(t, texts[0])
	for _, text := range texts[1:] {
		s := mustAvro(t, text)
		if s.Canonical() != first.Canonical() {
			t.Fatalf("canonical differs\n%s\n%s", s.Canonical(), first.Canonical())
		}
		if s.Normalized() != first.Normalized() {
			t.Fatalf("normalized differs\n%s\n%s", s.Normalized(), first.Normalized())
		}
	}
	// A different doc is a different schema to Confluent (its
	// testMetaInequalities), though not to Avro's fingerprint.
	other := mustAvro(t, strings.Replace(texts[0], "a user", "a person", 1))
	if other.Canonical() == first.Canonical() {
		t.Fatal("a changed doc left the canonical text unchanged")
	}
	fp1, _ := AvroFingerprint(first)
	fp2, _ := AvroFingerprint(other)
	if fp1 != fp2 {
		t.Fatal("a changed doc changed the parsing-form fingerprint")
	}
}

func TestAvroNormalized(t *testing.T) {
	for _, tc := range []struct{ name, text, canonical, normalized string }{
		{"aliases sorted and deduplicated",
			`{"type":"record","name":"R","namespace":"n","aliases":["Z","m.A","Z"],"fields":[{"name":"a","type":"int","aliases":["z","b"]}]}`,
			`{"type":"record","name":"R","namespace":"n","fields":[{"name":"a","type":"int","aliases":["z","b"]}],"aliases":["Z","m.A","Z"]}`,
			`{"type":"record","name":"R","namespace":"n","fields":[{"name":"a","type":"int","aliases":["b","z"]}],"aliases":["m.A","Z"]}`},
		{"empty doc of a named type dropped",
			`{"type":"record","name":"R","doc":"","fields":[{"name":"a","type":"int","doc":""}]}`,
			`{"type":"record","name":"R","doc":"","fields":[{"name":"a","type":"int","doc":""}]}`,
			`{"type":"record","name":"R","fields":[{"name":"a","type":"int","doc":""}]}`},
		{"whole-number default of a double",
			`{"type":"record","name":"R","fields":[{"name":"a","type":"double","default":1},{"name":"b","type":["float","null"],"default":2},{"name":"c","type":"long","default":3}]}`,
			`{"type":"record","name":"R","fields":[{"name":"a","type":"double","default":1},{"name":"b","type":["float","null"],"default":2},{"name":"c","type":"long","default":3}]}`,
			`{"type":"record","name":"R","fields":[{"name":"a","type":"double","default":1.0},{"name":"b","type":["float","null"],"default":2.0},{"name":"c","type":"long","default":3}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mustAvro(t, tc.text)
			if s.Canonical() != tc.canonical {
				t.Errorf("canonical\n got %s\nwant %s", s.Canonical(), tc.canonical)
			}
			if s.Normalized() != tc.normalized {
				t.Errorf("normalized\n got %s\nwant %s", s.Normalized(), tc.normalized)
			}
			if again := mustAvro(t, s.Normalized()).Normalized(); again != s.Normalized() {
				t.Errorf("normalized of normalized\n got %s\nwant %s", again, s.Normalized())
			}
		})
	}
}

// TestAvroFingerprint checks against Avro's shared test data
// (share/test/data/schema-tests.txt), whose fingerprints are signed.
func TestAvroFingerprint(t *testing.T) {
	for _, tc := range []struct {
		text, form string
		fp         int64
	}{
		{`"null"`, `"null"`, 7195948357588979594},
		{`"int"`, `"int"`, 8247732601305521295},
		{`{"fields":[], "type":"record", "name":"foo"}`, `{"name":"foo","type":"record","fields":[]}`, -4824392279771201922},
		{`{"fields":[], "type":"record", "name":"foo", "namespace":"x.y"}`, `{"name":"x.y.foo","type":"record","fields":[]}`, 5916914534497305771},
		{`{"fields":[], "type":"record", "name":"foo", "doc":"foo", "aliases":["foo","bar"]}`, `{"name":"foo","type":"record","fields":[]}`, -4824392279771201922},
		{`{"fields":[{"type":{"type":"boolean"}, "name":"f1"}], "type":"record", "name":"foo"}`, `{"name":"foo","type":"record","fields":[{"name":"f1","type":"boolean"}]}`, 7843277075252814651},
	} {
		s := mustAvro(t, tc.text)
		form, ok := AvroParsingCanonicalForm(s)
		if !ok || form != tc.form {
			t.Errorf("%s: parsing canonical form %q, want %q", tc.text, form, tc.form)
		}
		fp, ok := AvroFingerprint(s)
		if !ok || int64(fp) != tc.fp {
			t.Errorf("%s: fingerprint %d, want %d", tc.text, int64(fp), tc.fp)
		}
	}
}

func TestAvroReferences(t *testing.T) {
	// Dependencies first: Country is used by Address, Address by User.
	country := Ref{Name: "com.acme.Country", Subject: "country", Version: 1, Type: Avro,
		Schema: `{"type":"enum","name":"Country","namespace":"com.acme","symbols":["NL","FR"]}`}
	address := Ref{Name: "com.acme.Address", Subject: "address", Version: 3, Type: Avro,
		Schema: `{"type":"record","name":"Address","namespace":"com.acme","fields":[{"name":"city","type":"string"},{"name":"country","type":"Country"}]}`}
	refs := []Ref{country, address}
	user := mustAvro(t, `{"type":"record","name":"User","namespace":"com.acme","fields":[{"name":"home","type":"Address"},{"name":"work","type":["null","com.acme.Address"],"default":null}]}`, refs...)
	// Referenced types stay names, as Confluent's toString(refs) writes them.
	want := `{"type":"record","name":"User","namespace":"com.acme","fields":[{"name":"home","type":"Address"},{"name":"work","type":["null","Address"],"default":null}]}`
	if user.Canonical() != want {
		t.Fatalf("canonical\n got %s\nwant %s", user.Canonical(), want)
	}
	if got := user.References(); !slices.Equal(got, refs) {
		t.Fatalf("references = %v", got)
	}
	// A top-level reference: the schema is the referenced type itself.
	alias := mustAvro(t, `"com.acme.Address"`, refs...)
	if alias.Canonical() != `"com.acme.Address"` {
		t.Fatalf("canonical %s", alias.Canonical())
	}
	// Parses do not share named types: without refs, Address is unknown
	// again.
	if _, err := Parse(Avro, `"com.acme.Address"`, nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Address leaked between parses: err = %v", err)
	}
	// Compatibility looks into referenced types: a new version of
	// Address drops a symbol of Country the old one had.
	country2 := country
	country2.Version, country2.Schema = 2, `{"type":"enum","name":"Country","namespace":"com.acme","symbols":["NL"]}`
	user2 := mustAvro(t, `{"type":"record","name":"User","namespace":"com.acme","fields":[{"name":"home","type":"Address"},{"name":"work","type":["null","com.acme.Address"],"default":null}]}`, country2, address)
	got := CanRead(user2, user)
	wantIncs := []Incompatibility{
		{Kind: "MISSING_ENUM_SYMBOLS", Path: "/fields/0/type/fields/1/type/symbols", Message: "[FR]"},
		{Kind: "MISSING_UNION_BRANCH", Path: "/fields/1/type/1", Message: "reader union lacking writer type: RECORD"},
	}
	if !slices.Equal(got, wantIncs) {
		t.Fatalf("CanRead\n got %v\nwant %v", got, wantIncs)
	}
}

func TestAvroCanRead(t *testing.T) {
	const (
		v1 = `{"type":"record","name":"User","fields":[{"name":"id","type":"int"}]}`
		// v1 plus a field with a default, and plus one without.
		v2Default   = `{"type":"record","name":"User","fields":[{"name":"id","type":"int"},{"name":"email","type":"string","default":""}]}`
		v2NoDefault = `{"type":"record","name":"User","fields":[{"name":"id","type":"int"},{"name":"email","type":"string"}]}`
		empty       = `{"type":"record","name":"User","fields":[]}`
	)
	enumAB := `{"type":"enum","name":"Suit","symbols":["A","B"]}`
	enumABC := `{"type":"enum","name":"Suit","symbols":["A","B","C"]}`
	enumABDefault := `{"type":"enum","name":"Suit","symbols":["A","B"],"default":"A"}`
	rec := func(fieldType string) string {
		return `{"type":"record","name":"R","fields":[{"name":"f","type":` + fieldType + `}]}`
	}
	tm := func(path, r, w string) Incompatibility {
		return Incompatibility{Kind: "TYPE_MISMATCH", Path: path, Message: "reader type: " + r + " not compatible with writer type: " + w}
	}
	mub := func(path, w string) Incompatibility {
		return Incompatibility{Kind: "MISSING_UNION_BRANCH", Path: path, Message: "reader union lacking writer type: " + w}
	}
	for _, tc := range []struct {
		name           string
		reader, writer string
		want           []Incompatibility
	}{
		// Adding a field: BACKWARD reads old data with the new schema,
		// FORWARD the reverse.
		{"add field with default, backward", v2Default, v1, nil},
		{"add field with default, forward", v1, v2Default, nil},
		{"add field without default, backward", v2NoDefault, v1, []Incompatibility{
			{Kind: "READER_FIELD_MISSING_DEFAULT_VALUE", Path: "/fields/1", Message: "email"}}},
		{"add field without default, forward", v1, v2NoDefault, nil},
		// Removing a field is the reverse of adding it.
		{"remove field without default, backward", v1, v2NoDefault, nil},
		{"remove field without default, forward", v2NoDefault, v1, []Incompatibility{
			{Kind: "READER_FIELD_MISSING_DEFAULT_VALUE", Path: "/fields/1", Message: "email"}}},
		{"remove every field, forward", v1, empty, []Incompatibility{
			{Kind: "READER_FIELD_MISSING_DEFAULT_VALUE", Path: "/fields/0", Message: "id"}}},
		{"renamed field read through its alias", `{"type":"record","name":"User","fields":[{"name":"ident","aliases":["id"],"type":"int"}]}`, v1, nil},

		// Promotions, one way only.
		{"int to long", `"long"`, `"int"`, nil},
		{"int to float", `"float"`, `"int"`, nil},
		{"int to double", `"double"`, `"int"`, nil},
		{"long to float", `"float"`, `"long"`, nil},
		{"long to double", `"double"`, `"long"`, nil},
		{"float to double", `"double"`, `"float"`, nil},
		{"string to bytes", `"bytes"`, `"string"`, nil},
		{"bytes to string", `"string"`, `"bytes"`, nil},
		{"long to int", `"int"`, `"long"`, []Incompatibility{tm("/", "INT", "LONG")}},
		{"double to float", `"float"`, `"double"`, []Incompatibility{tm("/", "FLOAT", "DOUBLE")}},
		{"int to string", `"string"`, `"int"`, []Incompatibility{tm("/", "STRING", "INT")}},
		{"field long to int", rec(`"int"`), rec(`"long"`), []Incompatibility{tm("/fields/0/type", "INT", "LONG")}},
		{"array items", `{"type":"array","items":"int"}`, `{"type":"array","items":"long"}`, []Incompatibility{tm("/items", "INT", "LONG")}},
		{"map values", `{"type":"map","values":"int"}`, `{"type":"map","values":"long"}`, []Incompatibility{tm("/values", "INT", "LONG")}},
		{"map read as array", `{"type":"array","items":"int"}`, `{"type":"map","values":"int"}`, []Incompatibility{tm("/", "ARRAY", "MAP")}},
		{"logical type ignored", `{"type":"long","logicalType":"timestamp-millis"}`, `"long"`, nil},

		// Enums.
		{"enum symbol added, backward", enumABC, enumAB, nil},
		{"enum symbol added, forward", enumAB, enumABC, []Incompatibility{
			{Kind: "MISSING_ENUM_SYMBOLS", Path: "/symbols", Message: "[C]"}}},
		{"enum symbol removed, backward", enumAB, enumABC, []Incompatibility{
			{Kind: "MISSING_ENUM_SYMBOLS", Path: "/symbols", Message: "[C]"}}},
		{"enum symbol removed, reader has a default", enumABDefault, enumABC, nil},
		{"enum renamed", `{"type":"enum","name":"Colour","symbols":["A","B"]}`, enumAB, []Incompatibility{
			{Kind: "NAME_MISMATCH", Path: "/name", Message: "expected: Suit"}}},
		{"enum renamed with alias", `{"type":"enum","name":"Colour","aliases":["Suit"],"symbols":["A","B"]}`, enumAB, nil},
		{"reader enum field with default missing in writer", `{"type":"record","name":"User","fields":[{"name":"id","type":"int"},{"name":"s","type":` + enumABDefault + `}]}`, v1,
			[]Incompatibility{tm("/fields/1/type", "ENUM", "RECORD")}},

		// Unions.
		{"union branch added, backward", rec(`["null","int","string"]`), rec(`["null","int"]`), nil},
		{"union branch added, forward", rec(`["null","int"]`), rec(`["null","int","string"]`), []Incompatibility{
			mub("/fields/0/type/2", "STRING")}},
		{"union branch removed, backward", rec(`["null","int"]`), rec(`["null","string","int"]`), []Incompatibility{
			mub("/fields/0/type/1", "STRING")}},
		{"field made optional, backward", rec(`["null","int"]`), rec(`"int"`), nil},
		{"field made optional, forward", rec(`"int"`), rec(`["null","int"]`), []Incompatibility{
			tm("/fields/0/type/0", "INT", "NULL")}},
		{"union read as a type none of its branches reads", `["null","int"]`, `"string"`, []Incompatibility{mub("/", "STRING")}},
		{"union branch read through promotion", `["null","long"]`, `["null","int"]`, nil},

		// Names and fixed.
		{"record renamed", `{"type":"record","name":"Person","fields":[]}`, empty, []Incompatibility{
			{Kind: "NAME_MISMATCH", Path: "/name", Message: "expected: User"}}},
		{"record namespace changed", `{"type":"record","name":"User","namespace":"a","fields":[]}`, `{"type":"record","name":"User","namespace":"b","fields":[]}`, nil},
		{"record renamed with full-name alias", `{"type":"record","name":"Person","namespace":"a","aliases":["b.User"],"fields":[]}`, `{"type":"record","name":"User","namespace":"b","fields":[]}`, nil},
		{"fixed size", `{"type":"fixed","name":"F","size":4}`, `{"type":"fixed","name":"F","size":8}`, []Incompatibility{
			{Kind: "FIXED_SIZE_MISMATCH", Path: "/size", Message: "expected: 8, found: 4"}}},

		// Nested records.
		{"nested record field added without default",
			`{"type":"record","name":"Order","fields":[{"name":"id","type":"long"},{"name":"customer","type":{"type":"record","name":"Customer","fields":[{"name":"name","type":"string"},{"name":"vip","type":"boolean"}]}}]}`,
			`{"type":"record","name":"Order","fields":[{"name":"id","type":"long"},{"name":"customer","type":{"type":"record","name":"Customer","fields":[{"name":"name","type":"string"}]}}]}`,
			[]Incompatibility{{Kind: "READER_FIELD_MISSING_DEFAULT_VALUE", Path: "/fields/1/type/fields/1", Message: "vip"}}},

		// Recursive types end, and are checked once.
		{"recursive list, compatible",
			`{"type":"record","name":"Node","fields":[{"name":"value","type":"long"},{"name":"next","type":["null","Node"]}]}`,
			`{"type":"record","name":"Node","fields":[{"name":"value","type":"int"},{"name":"next","type":["null","Node"]}]}`, nil},
		{"recursive list, incompatible",
			`{"type":"record","name":"Node","fields":[{"name":"value","type":"int"},{"name":"next","type":["null","Node"]}]}`,
			`{"type":"record","name":"Node","fields":[{"name":"value","type":"long"},{"name":"next","type":["null","Node"]}]}`,
			// Node against Node is still being checked when the union
			// meets it again, so that branch counts as readable (Avro's
			// rule): the mismatch is reported once, where it is.
			[]Incompatibility{tm("/fields/0/type", "INT", "LONG")}},
		{"recursive tree",
			`{"type":"record","name":"Tree","fields":[{"name":"children","type":{"type":"array","items":"Tree"}},{"name":"label","type":"string","default":""}]}`,
			`{"type":"record","name":"Tree","fields":[{"name":"children","type":{"type":"array","items":"Tree"}}]}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := CanRead(mustAvro(t, tc.reader), mustAvro(t, tc.writer))
			if !slices.Equal(got, tc.want) {
				t.Fatalf("CanRead\n got %v\nwant %v", got, tc.want)
			}
		})
	}
}

// TestAvroCanReadMultiple is Avro's TestSchemaCompatibilityMultiple: one
// pair with every kind of incompatibility, in Avro's order and locations.
func TestAvroCanReadMultiple(t *testing.T) {
	reader := `{"type":"record","name":"base","fields":[
	  {"name":"check_enum_symbols_field","type":{"type":"enum","name":"check_enum_symbols_type","symbols":["A","C"]}},
	  {"name":"check_enum_name_field","type":{"type":"enum","name":"check_enum_name_type","symbols":["A","B","C","D"]}},
	  {"name":"type_mismatch_field","type":"string"},
	  {"name":"sub_record","type":{"type":"record","name":"sub_record_type","fields":[
	    {"name":"identical_1_field","type":"long","default":42},
	    {"name":"extra_no_default_field","type":"long"},
	    {"name":"fixed_length_mismatch_field","type":{"type":"fixed","name":"fixed_length_mismatch_type","size":4}},
	    {"name":"union_missing_branches_field","type":["boolean"]},
	    {"name":"reader_union_does_not_support_type_field","type":["boolean"]},
	    {"name":"record_fqn_mismatch_field","type":{"type":"record","name":"recordA","namespace":"not_nsA","fields":[
	      {"name":"A_field_0","type":"boolean","default":true},
	      {"name":"array_type_mismatch_field","type":{"type":"array","items":"string"}}]}}]}}]}`
	writer := `{"type":"record","name":"base","fields":[
	  {"name":"check_enum_symbols_field","type":{"type":"enum","name":"check_enum_symbols_type","symbols":["A","B","C","D"]}},
	  {"name":"check_enum_name_field","type":{"type":"enum","name":"check_enum_name_type_ERR","symbols":["A","B","C","D"]}},
	  {"name":"type_mismatch_field","type":"long"},
	  {"name":"sub_record","type":{"type":"record","name":"sub_record_type","fields":[
	    {"name":"identical_1_field","type":"long","default":42},
	    {"name":"fixed_length_mismatch_field","type":{"type":"fixed","name":"fixed_length_mismatch_type","size":8}},
	    {"name":"union_missing_branches_field","type":["boolean","double","string"]},
	    {"name":"reader_union_does_not_support_type_field","type":"long"},
	    {"name":"record_fqn_mismatch_field","type":{"type":"record","name":"recordA","namespace":"nsA","fields":[
	      {"name":"A_field_0","type":"boolean","default":true},
	      {"name":"array_type_mismatch_field","type":{"type":"array","items":"boolean"}}]}}]}}]}`
	want := []Incompatibility{
		{"MISSING_ENUM_SYMBOLS", "/fields/0/type/symbols", "[B, D]"},
		{"NAME_MISMATCH", "/fields/1/type/name", "expected: check_enum_name_type_ERR"},
		{"TYPE_MISMATCH", "/fields/2/type", "reader type: STRING not compatible with writer type: LONG"},
		{"READER_FIELD_MISSING_DEFAULT_VALUE", "/fields/3/type/fields/1", "extra_no_default_field"},
		{"FIXED_SIZE_MISMATCH", "/fields/3/type/fields/2/type/size", "expected: 8, found: 4"},
		{"MISSING_UNION_BRANCH", "/fields/3/type/fields/3/type/1", "reader union lacking writer type: DOUBLE"},
		{"MISSING_UNION_BRANCH", "/fields/3/type/fields/3/type/2", "reader union lacking writer type: STRING"},
		{"MISSING_UNION_BRANCH", "/fields/3/type/fields/4/type", "reader union lacking writer type: LONG"},
		{"TYPE_MISMATCH", "/fields/3/type/fields/5/type/fields/1/type/items", "reader type: STRING not compatible with writer type: BOOLEAN"},
	}
	got := CanRead(mustAvro(t, reader), mustAvro(t, writer))
	if !slices.Equal(got, want) {
		t.Fatalf("CanRead\n got %v\nwant %v", got, want)
	}
}

// TestAvroDifference renders incompatibilities as Confluent's registry
// words them for a BACKWARD check (the new schema reads the old one's
// data).
func TestAvroDifference(t *testing.T) {
	for _, tc := range []struct {
		inc  Incompatibility
		want string
	}{
		{Incompatibility{"READER_FIELD_MISSING_DEFAULT_VALUE", "/fields/1", "email"},
			`{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'email' at path '/fields/1' in the new schema has no default value and is missing in the old schema', additionalInfo:'email'}`},
		{Incompatibility{"TYPE_MISMATCH", "/fields/0/type", "reader type: INT not compatible with writer type: LONG"},
			`{errorType:'TYPE_MISMATCH', description:'The type (path '/fields/0/type') of a field in the new schema does not match with the old schema', additionalInfo:'reader type: INT not compatible with writer type: LONG'}`},
		{Incompatibility{"MISSING_ENUM_SYMBOLS", "/symbols", "[C]"},
			`{errorType:'MISSING_ENUM_SYMBOLS', description:'The new schema is missing enum symbols '[C]' at path '/symbols' in the old schema', additionalInfo:'[C]'}`},
		{Incompatibility{"MISSING_UNION_BRANCH", "/1", "reader union lacking writer type: STRING"},
			`{errorType:'MISSING_UNION_BRANCH', description:'The new schema is missing a type inside a union field at path '/1' in the old schema', additionalInfo:'reader union lacking writer type: STRING'}`},
		{Incompatibility{"NAME_MISMATCH", "/name", "expected: User"},
			`{errorType:'NAME_MISMATCH', description:'The name of the schema has changed (path '/name')', additionalInfo:'expected: User'}`},
		{Incompatibility{"FIXED_SIZE_MISMATCH", "/size", "expected: 8, found: 4"},
			`{errorType:'FIXED_SIZE_MISMATCH', description:'The size of FIXED type field at path '/size' in the new schema does not match with the old schema', additionalInfo:'expected: 8, found: 4'}`},
	} {
		if got := AvroDifference(tc.inc, "new", "old"); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}

// FuzzAvroParse: no text crashes the parser, the writer or the checker,
// and an accepted schema's canonical text parses to itself.
func FuzzAvroParse(f *testing.F) {
	for _, s := range []string{
		`"int"`, `{"type":"record","name":"R","fields":[{"name":"a","type":["null","R"],"default":null}]}`,
		`{"type":"enum","name":"E","symbols":["A"],"default":"A","x":{"b":[1.5e9]}}`,
		`{"type":"array","items":{"type":"map","values":{"type":"fixed","name":"F","size":2}}}`,
		`{"type":"record","name":"a.R","aliases":["b.S"],"fields":[{"name":"f","type":"double","default":1,"order":"ignore"}]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, err := Parse(Avro, text, nil)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		again, err := Parse(Avro, s.Canonical(), nil)
		if err != nil {
			t.Fatalf("canonical %s does not parse: %v", s.Canonical(), err)
		}
		if again.Canonical() != s.Canonical() {
			t.Fatalf("canonical not a fixed point:\n%s\n%s", s.Canonical(), again.Canonical())
		}
		CanRead(s, again)
		CanRead(again, s)
	})
}

// The resolved format writes the references' named types out where
// first used (Java's Schema.toString), names after that, namespaces
// relative to where they land.
func TestAvroResolved(t *testing.T) {
	refs := []Ref{
		{Name: "com.acme.Money", Subject: "money", Version: 1, Type: Avro, Schema: `{"type":"record","name":"Money","namespace":"com.acme","fields":[{"name":"units","type":"long"},{"name":"currency","type":{"type":"enum","name":"Currency","symbols":["EUR","USD"]}}]}`},
	}
	text := `{"type":"record","name":"Order","namespace":"com.acme","fields":[{"name":"total","type":"Money"},{"name":"tax","type":["null","com.acme.Money"]},{"name":"cur","type":"Currency"}]}`
	s, err := Parse(Avro, text, refs)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"record","name":"Order","namespace":"com.acme","fields":[{"name":"total","type":{"type":"record","name":"Money","fields":[{"name":"units","type":"long"},{"name":"currency","type":{"type":"enum","name":"Currency","symbols":["EUR","USD"]}}]}},{"name":"tax","type":["null","Money"]},{"name":"cur","type":"Currency"}]}`
	got, ok, err := AvroResolved(s)
	if err != nil || !ok {
		t.Fatalf("AvroResolved: %v %v", ok, err)
	}
	if got != want {
		t.Errorf("resolved\n got %s\nwant %s", got, want)
	}
	if _, err := Parse(Avro, got, nil); err != nil {
		t.Errorf("the resolved text does not stand alone: %v", err)
	}
	if s.Canonical() == got {
		t.Error("the canonical text inlines references")
	}
}
