package transforms

import (
	"testing"

	"github.com/samsa-io/samsa/connect"
)

func TestRegexRouter(t *testing.T) {
	cases := []struct {
		regex, replacement, topic, want string
	}{
		{"(.*)-(\\d+)", "$1_v$2", "orders-12", "orders_v12"},
		{"(.*)", "prefix.$1", "orders", "prefix.orders"},
		{"orders", "renamed", "orders-x", "orders-x"}, // matches() needs the whole topic
		{"(.*)", "$10", "ab", "ab0"},                  // one group: $10 is $1 then "0"
		{"(?P<t>.*)s", "${t}-x", "orders", "order-x"},
		{"(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)", "$10$1", "abcdefghij", "ja"},
		{"(.*)", "cost\\$$1", "x", "cost$x"},
		{"(x)?y", "[$1]", "y", "[]"}, // an unmatched group is empty
		{"(a|ab)", "X", "ab", "Xb"},  // replaceFirst replaces the first match, not the whole topic
		{"(.*?)", "X", "abc", "Xabc"},
	}
	for _, c := range cases {
		tr := newTransform(t, "RegexRouter", map[string]string{"regex": c.regex, "replacement": c.replacement})
		r := valueRecord(nil, 1)
		r.Topic = c.topic
		if got := apply(t, tr, r).Topic; got != c.want {
			t.Fatalf("%s -> %s on %s = %s, want %s", c.regex, c.replacement, c.topic, got, c.want)
		}
	}
	for props, msg := range map[*map[string]string]string{
		{"regex": "(", "replacement": "x"}:     "Invalid value ( for configuration regex: Invalid regex:",
		{"regex": "(a)", "replacement": "$2"}:  "Invalid value $2 for configuration replacement: No group 2",
		{"regex": "a", "replacement": "x$"}:    "Illegal group reference",
		{"regex": "a", "replacement": "x\\"}:   "character to be escaped is missing",
		{"regex": "(?=a)", "replacement": "x"}: "Invalid regex",
		{"regex": "a"}:                         `Missing required configuration "replacement" which has no default value.`,
	} {
		_, err := configure("RegexRouter", *props)
		wantErr(t, err, msg)
	}
}

func TestFlatten(t *testing.T) {
	tr := newTransform(t, "Flatten$Value", map[string]string{"delimiter": "_"})
	out := apply(t, tr, valueRecord(nil, map[string]any{
		"a": map[string]any{"b": map[string]any{"c": int32(1)}, "d": []any{map[string]any{"x": 1}}},
		"e": nil, "f": "g",
	}))
	wantValue(t, out.Value, map[string]any{"a_b_c": int32(1), "a_d": []any{map[string]any{"x": 1}}, "e": nil, "f": "g"})
	_, _, err := tr.Apply(valueRecord(nil, map[string]any{"t": struct{}{}}))
	wantErr(t, err, "Flatten transformation was passed a value of type struct {}")
}

func TestFlattenWithSchema(t *testing.T) {
	addr := build("addr", "street", connect.StringSchema, "zip", &connect.Schema{Type: connect.Int32, Default: int32(0)})
	optAddr := *addr
	optAddr.Optional = true
	in := build("person", "name", connect.StringSchema, "home", addr, "work", &optAddr, "tags", connect.ArrayOf(connect.StringSchema))
	tr := newTransform(t, "Flatten$Value", map[string]string{})
	v := structOf(in, "name", "ann", "home", structOf(addr, "street", "main"), "tags", []any{"x"})
	out := apply(t, tr, valueRecord(in, v))

	want := build("person",
		"name", connect.StringSchema,
		"home.street", connect.StringSchema,
		"home.zip", &connect.Schema{Type: connect.Int32, Default: int32(0)},
		"work.street", connect.OptionalString, // optional because work is
		"work.zip", &connect.Schema{Type: connect.Int32, Optional: true, Default: int32(0)},
		"tags", connect.ArrayOf(connect.StringSchema))
	wantSchema(t, out.ValueSchema, want)
	wantValue(t, get(t, out.Value, "home.street"), "main")
	wantValue(t, get(t, out.Value, "home.zip"), int32(0))
	wantValue(t, get(t, out.Value, "work.street"), nil)
	wantValue(t, get(t, out.Value, "tags"), []any{"x"})

	withMap := build("", "m", connect.MapOf(connect.StringSchema, connect.StringSchema))
	_, _, err := tr.Apply(valueRecord(withMap, structOf(withMap, "m", map[any]any{"a": "b"})))
	wantErr(t, err, "Flatten transformation does not support MAP for record with schemas (for field m).")

	// Two paths that flatten to one name are refused, not merged.
	clash := build("", "a", build("", "b", connect.Int8Schema), "a.b", connect.Int8Schema)
	_, _, err = tr.Apply(valueRecord(clash, structOf(clash, "a", structOf(clash.Fields[0].Schema, "b", int8(1)), "a.b", int8(2))))
	wantErr(t, err, "Cannot create field because of field name duplication a.b")
}

func TestFlattenParentDefault(t *testing.T) {
	inner := build("", "x", connect.OptionalInt32)
	def := structOf(inner, "x", int32(5))
	withDefault := *inner
	withDefault.Default = def
	in := build("", "p", &withDefault)
	out := apply(t, newTransform(t, "Flatten$Key", map[string]string{}), keyRecord(in, structOf(in)))
	wantSchema(t, out.KeySchema, build("", "p.x", &connect.Schema{Type: connect.Int32, Optional: true, Default: int32(5)}))
	wantValue(t, get(t, out.Key, "p.x"), int32(5))
}
