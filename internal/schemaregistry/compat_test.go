package schemaregistry

import (
	"strings"
	"testing"

	"github.com/samsa-io/samsa/internal/schemaregistry/schema"
)

// TestCheckCompatibility: each level checks the direction and the
// versions it names. Version 1 is {a}, version 2 adds b with a default;
// x makes b required (readable from v2's data, not v1's), y drops a
// (which v2 needs, having no default for it).
func TestCheckCompatibility(t *testing.T) {
	parse := func(s string) schema.Schema {
		p, err := schema.Parse(schema.Avro, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	x := `{"type":"record","name":"r","fields":[{"name":"a","type":"int"},{"name":"b","type":"string"}]}`
	y := `{"type":"record","name":"r","fields":[{"name":"b","type":"string","default":"x"}]}`
	previous := []previousSchema{{version: 2, text: s2, parsed: parse(s2)}, {version: 1, text: s1, parsed: parse(s1)}}
	for _, c := range []struct {
		level, candidate string
		failsOn          string // the version named in the messages; "" when compatible
	}{
		{levelNone, y, ""},
		{levelBackward, x, ""},
		{levelBackwardTransitive, x, "{oldSchemaVersion: 1}"},
		{levelForward, x, ""},
		{levelForwardTransitive, x, ""},
		{levelFull, x, ""},
		{levelFullTransitive, x, "{oldSchemaVersion: 1}"},
		{levelBackward, y, ""},
		{levelBackwardTransitive, y, ""},
		{levelForward, y, "{oldSchemaVersion: 2}"},
		{levelForwardTransitive, y, "{oldSchemaVersion: 2}"},
		{levelFull, y, "{oldSchemaVersion: 2}"},
	} {
		msgs := checkCompatibility(c.level, parse(c.candidate), previous)
		got := strings.Join(msgs, ", ")
		switch {
		case c.failsOn == "" && len(msgs) > 0:
			t.Errorf("%s %s: incompatible: %s", c.level, c.candidate, got)
		case c.failsOn != "" && !strings.Contains(got, c.failsOn):
			t.Errorf("%s %s: got %q, want a failure on %s", c.level, c.candidate, got, c.failsOn)
		case c.failsOn != "" && !strings.HasSuffix(got, "{validateFields: 'false', compatibility: '"+c.level+"'}"):
			t.Errorf("%s %s: messages do not end with the level: %q", c.level, c.candidate, got)
		}
	}
	// Avro's incompatibilities read as Confluent words them, with the new
	// and old schema in the roles of the check's direction.
	if got := strings.Join(checkCompatibility(levelBackwardTransitive, parse(x), previous), ", "); !strings.Contains(got,
		"{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'b' at path '/fields/1' in the new schema has no default value and is missing in the old schema', additionalInfo:'b'}") {
		t.Errorf("backward, b required: %q", got)
	}
	if msgs := checkCompatibility(levelBackward, parse(s3), nil); len(msgs) != 0 {
		t.Errorf("a first version is always compatible: %v", msgs)
	}
}

// TestStateApply: records as Confluent's registry writes them build the
// state, tombstones and all; records of kinds this registry does not know
// change nothing, and a record it cannot read is skipped with an error.
func TestStateApply(t *testing.T) {
	st := newState()
	recs := []struct{ key, value string }{
		{`{"keytype":"SCHEMA","subject":"a","version":1,"magic":1}`, `{"subject":"a","version":1,"id":7,"schema":"\"int\"","deleted":false}`},
		{`{"keytype":"SCHEMA","subject":"a","version":2,"magic":1}`, `{"subject":"a","version":2,"id":9,"schema":"\"long\"","deleted":false}`},
		{`{"keytype":"SCHEMA","subject":"b","version":1,"magic":1}`, `{"subject":"b","version":1,"id":7,"schema":"\"int\"","deleted":false}`},
		{`{"keytype":"CONFIG","subject":null,"magic":0}`, `{"compatibilityLevel":"FULL"}`},
		{`{"keytype":"CONFIG","subject":"a","magic":0}`, `{"subject":"a","compatibilityLevel":"NONE"}`},
		{`{"keytype":"MODE","subject":null,"magic":0}`, `{"mode":"READONLY"}`},
		{`{"keytype":"NOOP","magic":0}`, ``},
		{`{"keytype":"CONTEXT","tenant":"default","context":".","magic":0}`, `{}`},
		// Another context: its own IDs (7 again, another schema) and its record.
		{`{"keytype":"CONTEXT","tenant":"default","context":".ctx","magic":0}`, `{"tenant":"default","context":".ctx"}`},
		{`{"keytype":"CONTEXT","tenant":"default","context":".gone","magic":0}`, `{"tenant":"default","context":".gone"}`},
		{`{"keytype":"CONTEXT","tenant":"default","context":".gone","magic":0}`, ``},
		{`{"keytype":"SCHEMA","subject":":.ctx:a","version":1,"magic":1}`, `{"subject":":.ctx:a","version":1,"id":7,"schema":"\"string\"","deleted":false}`},
		{`{"keytype":"DELETE_SUBJECT","subject":"a","magic":0}`, `{"subject":"a","version":1}`},
		{`{"keytype":"SCHEMA","subject":"b","version":1,"magic":1}`, ``},
		{`{"keytype":"CONFIG","subject":"a","magic":0}`, ``},
	}
	for _, r := range recs {
		var v []byte
		if r.value != "" {
			v = []byte(r.value)
		}
		if err := st.apply([]byte(r.key), v); err != nil {
			t.Fatalf("%s: %v", r.key, err)
		}
	}
	if err := st.apply([]byte(`{"keytype":"SCHEMA","subject":"a","magic":1}`), []byte(`{}`)); err == nil {
		t.Error("a schema key without a version was applied")
	}
	if got := st.versions("a", false); len(got) != 1 || got[0] != 2 {
		t.Errorf("live versions of a: %v", got)
	}
	if got := st.versions("a", true); len(got) != 2 {
		t.Errorf("all versions of a: %v", got)
	}
	if st.subjects["b"] != nil {
		t.Error("b survived its tombstone")
	}
	if holders := st.holders(defaultContext, 7); len(holders) != 1 || holders[0] != (subjectVersion{"a", 1}) {
		t.Errorf("holders of 7: %v", holders)
	}
	if v := st.byID(".ctx", 7); v == nil || v.Schema != `"string"` || st.maxID[".ctx"] != 7 {
		t.Errorf("7 in .ctx: %+v (max %d)", v, st.maxID[".ctx"])
	}
	if len(st.contexts) != 1 || !st.contexts[".ctx"] {
		t.Errorf("contexts %v", st.contexts)
	}
	if st.maxID[defaultContext] != 9 || st.globalConfig != levelFull || st.globalMode != modeReadOnly || len(st.configs) != 0 {
		t.Errorf("maxID %d, config %q %v, mode %q", st.maxID[defaultContext], st.globalConfig, st.configs, st.globalMode)
	}
	// CLEAR_SUBJECT forgets the subjects under its prefix; the largest ID
	// stays, so an ID is never given twice.
	if err := st.apply([]byte(`{"keytype":"CLEAR_SUBJECT","subject":"a","magic":0}`), []byte(`{"subject":"a"}`)); err != nil {
		t.Fatal(err)
	}
	if err := st.apply([]byte(`{"keytype":"CLEAR_SUBJECT","subject":":.ctx:","magic":0}`), []byte(`{"subject":":.ctx:"}`)); err != nil {
		t.Fatal(err)
	}
	if len(st.subjects) != 0 || len(st.ids) != 0 || st.maxID[defaultContext] != 9 {
		t.Errorf("after clear: %v %v max %d", st.subjects, st.ids, st.maxID[defaultContext])
	}
}
