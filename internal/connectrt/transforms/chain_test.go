package transforms

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/samsa-io/samsa/connect"
)

func mustChain(t *testing.T, props map[string]string) *Chain {
	t.Helper()
	c, err := NewChain(props)
	if err != nil {
		t.Fatalf("NewChain: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestChainAppliesInOrder(t *testing.T) {
	c := mustChain(t, map[string]string{
		"transforms":                   "hoist, route,stamp",
		"transforms.hoist.type":        "HoistField$Value",
		"transforms.hoist.field":       "line",
		"transforms.route.type":        "org.apache.kafka.connect.transforms.RegexRouter",
		"transforms.route.regex":       "(.*)",
		"transforms.route.replacement": "copy-$1",
		"transforms.stamp.type":        "InsertField$Value",
		"transforms.stamp.topic.field": "from",
		"connector.class":              "FileStreamSource",
		"transforms.unlisted.type":     "no such class, and not listed",
	})
	if c.Len() != 3 {
		t.Fatalf("%d stages", c.Len())
	}
	out, keep, err := c.Apply(valueRecord(nil, "hello"))
	if err != nil || !keep {
		t.Fatalf("apply: %v %v", keep, err)
	}
	if out.Topic != "copy-orders" {
		t.Fatalf("topic %s", out.Topic)
	}
	// The third stage saw the second's topic.
	wantValue(t, out.Value, map[string]any{"line": "hello", "from": "copy-orders"})
}

func TestChainPredicates(t *testing.T) {
	props := map[string]string{
		"transforms":                          "dropTombstones,onlyOrders",
		"transforms.dropTombstones.type":      "Filter",
		"transforms.dropTombstones.predicate": "isTombstone",
		"transforms.onlyOrders.type":          "org.apache.kafka.connect.transforms.Filter",
		"transforms.onlyOrders.predicate":     "isOrders",
		"transforms.onlyOrders.negate":        "true",
		"predicates":                          "isTombstone,isOrders",
		"predicates.isTombstone.type":         "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone",
		"predicates.isOrders.type":            "TopicNameMatches",
		"predicates.isOrders.pattern":         "orders|invoices",
	}
	c := mustChain(t, props)
	for _, tc := range []struct {
		topic string
		value any
		keep  bool
	}{
		{"orders", "v", true},
		{"orders", nil, false},   // a tombstone
		{"invoices", "v", true},  // matches the pattern
		{"payments", "v", false}, // negate: dropped when the topic does not match
	} {
		r := valueRecord(nil, tc.value)
		r.Topic = tc.topic
		out, keep, err := c.Apply(r)
		if err != nil {
			t.Fatal(err)
		}
		if keep != tc.keep {
			t.Fatalf("%s %v: keep=%v, want %v", tc.topic, tc.value, keep, tc.keep)
		}
		if keep && out.Topic != tc.topic {
			t.Fatalf("kept record changed: %+v", out)
		}
	}
}

func TestChainErrors(t *testing.T) {
	base := func(extra ...string) map[string]string {
		p := map[string]string{"transforms": "a", "transforms.a.type": "ExtractField$Value", "transforms.a.field": "x"}
		for i := 0; i < len(extra); i += 2 {
			if extra[i+1] == "<unset>" {
				delete(p, extra[i])
				continue
			}
			p[extra[i]] = extra[i+1]
		}
		return p
	}
	cases := []struct {
		name  string
		props map[string]string
		msg   string
	}{
		{"duplicate alias", base("transforms", "a,b,a"), "Invalid value [a, b, a] for configuration transforms: Duplicate alias provided."},
		{"no type", base("transforms.a.type", "<unset>"), `Missing required configuration "transforms.a.type" which has no default value.`},
		{"unknown type", base("transforms.a.type", "com.example.Nope"), "Invalid value com.example.Nope for configuration transforms.a.type: Class com.example.Nope could not be found."},
		{"predicate class as a transform", base("transforms.a.type", "RecordIsTombstone"), "Class RecordIsTombstone could not be found."},
		{"transform's own required key", base("transforms.a.field", "<unset>"), `Missing required configuration "transforms.a.field" which has no default value.`},
		{"transform's own bad value", base("transforms.a.field.syntax.version", "V9"), "Invalid value V9 for configuration transforms.a.field.syntax.version: String must be one of (case insensitive): V1, V2"},
		{"negate without predicate", base("transforms.a.negate", "true"), "Config 'transforms.a.negate' was provided but there is no config 'transforms.a.predicate' defining a predicate to be negated."},
		{"bad negate", base("transforms.a.negate", "yes", "transforms.a.predicate", "p", "predicates", "p", "predicates.p.type", "RecordIsTombstone"), "Invalid value yes for configuration transforms.a.negate: Expected value to be either true or false"},
		{"undefined predicate", base("transforms.a.predicate", "p"), "Invalid value p for configuration transforms.a.predicate: no predicate p is listed in predicates"},
		{"predicate without type", base("transforms.a.predicate", "p", "predicates", "p"), `Missing required configuration "predicates.p.type" which has no default value.`},
		{"unknown predicate type", base("predicates", "p", "predicates.p.type", "Filter"), "Invalid value Filter for configuration predicates.p.type: Class Filter could not be found."},
		{"predicate's own key", base("predicates", "p", "predicates.p.type", "TopicNameMatches"), `Missing required configuration "predicates.p.pattern" which has no default value.`},
		{"misspelt option", base("transforms.a.feild", "y"), "transforms.a.feild: not a config of org.apache.kafka.connect.transforms.ExtractField$Value (its configs: field, replace.null.with.default, field.syntax.version)"},
		{"misspelt predicate option", base("transforms.a.predicate", "p", "predicates", "p", "predicates.p.type", "RecordIsTombstone", "predicates.p.name", "x"), "predicates.p.name: not a config of org.apache.kafka.connect.transforms.predicates.RecordIsTombstone (it has no configs)"},
		{"configure-time error", map[string]string{"transforms": "i", "transforms.i.type": "InsertField$Value"}, "transforms.i: No field insertion configured"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewChain(c.props)
			wantErr(t, err, c.msg)
		})
	}
}

func TestChainEmptyAndApplyError(t *testing.T) {
	c := mustChain(t, map[string]string{"transforms": ""})
	r := valueRecord(nil, "x")
	out, keep, err := c.Apply(r)
	if err != nil || !keep || out.Value != "x" {
		t.Fatalf("empty chain: %v %v %v", out, keep, err)
	}
	c = mustChain(t, map[string]string{"transforms": "i", "transforms.i.type": "InsertField$Value", "transforms.i.topic.field": "t"})
	_, _, err = c.Apply(valueRecord(nil, "not a map"))
	wantErr(t, err, "transforms.i (org.apache.kafka.connect.transforms.InsertField$Value): Only Map objects supported")
	if !errors.Is(err, connect.ErrData) {
		t.Fatalf("%v is not ErrData", err)
	}
}

func TestEnrichConfigDef(t *testing.T) {
	props := map[string]string{
		"transforms": "a,bad", "transforms.a.type": "Cast$Value", "transforms.a.spec": "int8",
		"transforms.bad.type": "Nope",
		"predicates":          "p", "predicates.p.type": "HasHeaderKey",
	}
	def, err := EnrichConfigDef(props)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, k := range def.Keys() {
		names = append(names, k.Name+"@"+k.Group)
	}
	want := []string{
		"transforms.a.type@Transforms: a", "transforms.a.predicate@Transforms: a", "transforms.a.negate@Transforms: a",
		"transforms.a.spec@Transforms: a", "transforms.a.replace.null.with.default@Transforms: a",
		"transforms.bad.type@Transforms: bad",
		"predicates.p.type@Predicates: p", "predicates.p.name@Predicates: p",
	}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("keys\n%s\nwant\n%s", strings.Join(names, "\n"), strings.Join(want, "\n"))
	}
	errs := map[string][]string{}
	for _, v := range def.Validate(props) {
		errs[v.Name] = v.Errors
	}
	if len(errs["transforms.bad.type"]) != 1 || !strings.Contains(errs["transforms.bad.type"][0], "Class Nope could not be found.") {
		t.Fatalf("bad type errors: %v", errs["transforms.bad.type"])
	}
	if len(errs["predicates.p.name"]) != 1 || len(errs["transforms.a.spec"]) != 0 {
		t.Fatalf("errors: %v", errs)
	}
	if k, _ := def.Key("transforms.a.type"); len(k.Recommended) != len(TransformPlugins()) || k.DisplayName != "Transformation type for a" {
		t.Fatalf("type key %+v", k)
	}
	if _, err := BaseConfigDef().Parse(map[string]string{}); err != nil {
		t.Fatal(err)
	}
}

func TestChainAliasCollision(t *testing.T) {
	// transforms.a.target.type is a's option and the type key of alias
	// "a.target": reading it must not panic.
	_, err := NewChain(map[string]string{
		"transforms": "a,a.target", "transforms.a.type": "TimestampConverter$Value",
		"transforms.a.target.type": "unix",
	})
	wantErr(t, err, "Configuration transforms.a.target.type is defined twice.")
}

// TestChainConcurrentApply: tasks may share a chain; the schema caches
// are the only state Apply touches (run under -race).
func TestChainConcurrentApply(t *testing.T) {
	c := mustChain(t, map[string]string{
		"transforms": "i,c", "transforms.i.type": "InsertField$Value", "transforms.i.topic.field": "t",
		"transforms.c.type": "Cast$Value", "transforms.c.spec": "id:string",
	})
	done := make(chan error)
	for g := 0; g < 4; g++ {
		go func(g int) {
			var err error
			for i := 0; i < 200 && err == nil; i++ {
				// A fresh but equal schema per record, as converters make.
				s := build("r", "id", connect.Int32Schema, fmt.Sprintf("f%d", i%20), connect.OptionalString)
				var out connect.Record
				out, _, err = c.Apply(valueRecord(s, structOf(s, "id", int32(i))))
				if err == nil {
					if id, _ := out.Value.(*connect.Struct).Get("id"); id != fmt.Sprint(i) {
						err = fmt.Errorf("id %v, want %d", id, i)
					}
				}
			}
			done <- err
		}(g)
	}
	for g := 0; g < 4; g++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
