package schema

import (
	"errors"
	"sort"
	"strings"
	"testing"
)

func mustParseJSON(t *testing.T, text string, refs ...Ref) Schema {
	t.Helper()
	s, err := Parse(JSON, text, refs)
	if err != nil {
		t.Fatalf("parse %s: %v", text, err)
	}
	return s
}

// TestJSONDiffConfluentCases runs Confluent's own diff cases: the
// differences found (kind and path) and the verdict at the STRICT policy.
func TestJSONDiffConfluentCases(t *testing.T) {
	for _, tc := range confluentDiffCases {
		t.Run(tc.name, func(t *testing.T) {
			o := mustParseJSON(t, tc.original).(*jsonSchema)
			u := mustParseJSON(t, tc.update).(*jsonSchema)
			var got []string
			for _, d := range jsonDiff(o, u) {
				got = append(got, d.Kind+" "+d.Path)
			}
			want := append([]string(nil), tc.changes...)
			if d, ok := jsonDiffDivergences[tc.name]; ok {
				want = d
			}
			sort.Strings(got)
			sort.Strings(want)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("differences\n got: %q\nwant: %q", got, want)
			}
			incompatible := CanRead(u, o)
			if (len(incompatible) == 0) != tc.compatible && tc.name != "schema: Detect changes to additional items schema" {
				t.Errorf("compatible = %v, want %v (%v)", len(incompatible) == 0, tc.compatible, incompatible)
			}
		})
	}
}

// jsonDiffDivergences are the cases where Samsa lists other differences
// than Confluent, with the verdict unchanged. Confluent's 2020-12 path
// translates json-sKema's model into everit's and loses $id, maxProperties
// and minProperties beside an empty properties, minContains and a false
// additionalProperties; Samsa reads them as for the older drafts (all are
// compatible changes). Draft 7's additionalItems without items is dropped
// by the compiler when it is a schema (validation ignores it anyway), so
// Samsa finds that change compatible where Confluent does not.
var jsonDiffDivergences = map[string][]string{
	"schema-2020-12: Detect changes to id":                       {"ID_CHANGED #/"},
	"schema-2020-12: Detect removed maxProperties":               {"MAX_PROPERTIES_REMOVED #/maxProperties"},
	"schema-2020-12: Detect removed minProperties":               {"MIN_PROPERTIES_REMOVED #/minProperties"},
	"schema-2020-12: Detect removed minContains":                 {"MIN_CONTAINS_REMOVED #/minContains"},
	"schema-2020-12: Detect added boolean additional properties": {"ADDITIONAL_PROPERTIES_ADDED #/additionalProperties"},
	"schema: Detect changes to additional items schema":          {},
}

func TestJSONParseDrafts(t *testing.T) {
	for _, draft := range []string{
		"", // Confluent's default, draft 7
		"http://json-schema.org/draft-04/schema#",
		"http://json-schema.org/draft-06/schema#",
		"http://json-schema.org/draft-07/schema#",
		"https://json-schema.org/draft/2019-09/schema",
		"https://json-schema.org/draft/2020-12/schema",
	} {
		text := `{"type":"object","properties":{"a":{"type":"string","maxLength":3}}}`
		if draft != "" {
			text = `{"$schema":"` + draft + `","type":"object","properties":{"a":{"type":"string","maxLength":3}}}`
		}
		s := mustParseJSON(t, text)
		want := map[string]int{"": 7, "http://json-schema.org/draft-04/schema#": 4, "http://json-schema.org/draft-06/schema#": 6,
			"http://json-schema.org/draft-07/schema#": 7, "https://json-schema.org/draft/2019-09/schema": 2019,
			"https://json-schema.org/draft/2020-12/schema": 2020}[draft]
		if got := s.(*jsonSchema).compiled.DraftVersion; got != want {
			t.Errorf("%q: draft %d, want %d", draft, got, want)
		}
	}
	// A keyword's meaning follows the draft: exclusiveMaximum is a boolean
	// in draft 4 and a number from draft 6 on.
	if _, err := Parse(JSON, `{"$schema":"http://json-schema.org/draft-04/schema#","maximum":3,"exclusiveMaximum":true}`, nil); err != nil {
		t.Errorf("draft 4 boolean exclusiveMaximum: %v", err)
	}
	if _, err := Parse(JSON, `{"maximum":3,"exclusiveMaximum":true}`, nil); err == nil {
		t.Errorf("draft 7 boolean exclusiveMaximum parsed")
	}
}

func TestJSONParseInvalid(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{`{"type":`, "unexpected EOF"},
		{`[1,2]`, "must be an object or a boolean"},
		{`{"type":"strin"}`, "type"},
		{`{"minLength":-1}`, "minLength"},
		{`{} {}`, "after the schema"},
		{``, "empty"},
	} {
		_, err := Parse(JSON, tc.text, nil)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want ErrInvalid mentioning %q", tc.text, err, tc.want)
		}
	}
}

func TestJSONReferences(t *testing.T) {
	address := Ref{Name: "address.json", Subject: "address", Version: 1, Type: JSON,
		Schema: `{"type":"object","properties":{"street":{"type":"string"}},"required":["street"]}`}
	text := `{"type":"object","properties":{"home":{"$ref":"address.json"}}}`
	s := mustParseJSON(t, text, address)
	if len(s.References()) != 1 {
		t.Fatalf("references %v", s.References())
	}
	// A reference by absolute URL, as Confluent's users often name them.
	abs := address
	abs.Name = "https://example.com/schemas/address.json"
	mustParseJSON(t, `{"properties":{"home":{"$ref":"https://example.com/schemas/address.json"}}}`, abs)

	// The checker follows the $ref: the referenced schema narrowed is seen
	// through it.
	narrowed := address
	narrowed.Schema = `{"type":"object","properties":{"street":{"type":"string","maxLength":10}},"required":["street"]}`
	reader := mustParseJSON(t, text, narrowed)
	got := CanRead(reader, s)
	if len(got) != 1 || got[0].Kind != "MAX_LENGTH_ADDED" || got[0].Path != "/properties/home/properties/street/maxLength" {
		t.Errorf("CanRead through $ref = %v", got)
	}

	for _, tc := range []struct {
		name, text string
		refs       []Ref
	}{
		{"missing reference", `{"properties":{"home":{"$ref":"address.json"}}}`, nil},
		{"file URL", `{"properties":{"home":{"$ref":"file:///etc/passwd"}}}`, nil},
		{"http URL", `{"properties":{"home":{"$ref":"http://127.0.0.1:1/x.json"}}}`, nil},
		{"reference of another type", text, []Ref{{Name: "address.json", Type: Avro, Schema: `"string"`}}},
	} {
		_, err := Parse(JSON, tc.text, tc.refs)
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", tc.name, err)
			continue
		}
		if tc.refs == nil && !strings.Contains(err.Error(), "only through references") {
			t.Errorf("%s: err = %v, want it to say references are the only way", tc.name, err)
		}
	}
}

func TestJSONCanonicalAndNormalized(t *testing.T) {
	a := mustParseJSON(t, "{\n  \"type\": \"object\",\n  \"properties\": {\"b\": {\"type\": \"string\", \"description\": \"<&> é \\u0001\"}, \"a\": {\"type\": \"number\", \"maximum\": 1.50}}\n}")
	b := mustParseJSON(t, `{"properties":{"a":{"maximum":1.50,"type":"number"},"b":{"description":"<&> é \u0001","type":"string"}},"type":"object"}`)
	wantCanon := `{"type":"object","properties":{"b":{"type":"string","description":"<&> é \u0001"},"a":{"type":"number","maximum":1.50}}}`
	if a.Canonical() != wantCanon {
		t.Errorf("Canonical\n got %s\nwant %s", a.Canonical(), wantCanon)
	}
	// Canonical keeps key order, as Confluent: the two texts differ there.
	if a.Canonical() == b.Canonical() {
		t.Errorf("key order lost in Canonical: %s", a.Canonical())
	}
	// Normalized sorts keys: the two texts meet there, stably.
	if a.Normalized() != b.Normalized() {
		t.Errorf("Normalized differ:\n%s\n%s", a.Normalized(), b.Normalized())
	}
	again := mustParseJSON(t, a.Canonical())
	if again.Canonical() != a.Canonical() || again.Normalized() != a.Normalized() {
		t.Errorf("not stable: %s / %s", again.Canonical(), again.Normalized())
	}
	if got := mustParseJSON(t, " true ").Canonical(); got != "true" {
		t.Errorf("boolean schema canonical %q", got)
	}
}

func TestJSONCanReadMessages(t *testing.T) {
	writer := mustParseJSON(t, `{"type":"object","properties":{"name":{"type":"string"}},"additionalProperties":false}`)
	reader := mustParseJSON(t, `{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}},"required":["age"],"additionalProperties":false}`)
	got := CanRead(reader, writer)
	want := []Incompatibility{{
		Kind:    "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL",
		Path:    "/properties/age",
		Message: "The reader schema has an unopen content model and has a required property at path '#/properties/age' which is missing in the writer schema",
	}}
	if len(got) != 1 || got[0] != want[0] {
		t.Errorf("CanRead = %v\nwant %v", got, want)
	}
	// The other way round the closed reader cannot take the writer's age.
	if got := CanRead(writer, reader); len(got) != 1 || got[0].Kind != "PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL" || got[0].Path != "/properties/age" {
		t.Errorf("CanRead reversed = %v", got)
	}
	if got := CanRead(writer, writer); len(got) != 0 {
		t.Errorf("CanRead self = %v", got)
	}
}

// TestJSONRecursive checks a recursive schema against itself and a change
// deep inside the recursion.
func TestJSONRecursive(t *testing.T) {
	tree := `{"$ref":"#/definitions/node","definitions":{"node":{"type":"object","properties":{"value":{"type":"%s"},"children":{"type":"array","items":{"$ref":"#/definitions/node"}},"next":{"oneOf":[{"type":"null"},{"$ref":"#/definitions/node"}]}}}}}`
	a := mustParseJSON(t, strings.Replace(tree, "%s", "string", 1))
	b := mustParseJSON(t, strings.Replace(tree, "%s", "string", 1))
	c := mustParseJSON(t, strings.Replace(tree, "%s", "number", 1))
	if got := CanRead(b, a); len(got) != 0 {
		t.Errorf("recursive self = %v", got)
	}
	// The change is seen at the top and through each recursive path.
	found := map[string]string{}
	for _, i := range CanRead(c, a) {
		found[i.Path] = i.Kind
	}
	for path, kind := range map[string]string{
		"/properties/value":                           "TYPE_CHANGED",
		"/properties/children/items/properties/value": "TYPE_CHANGED",
		"/properties/next":                            "COMBINED_TYPE_SUBSCHEMAS_CHANGED",
	} {
		if found[path] != kind {
			t.Errorf("recursive change at %s: %q, want %q (all: %v)", path, found[path], kind, found)
		}
	}
}
