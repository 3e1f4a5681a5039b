package transforms

import (
	"math/big"
	"testing"
	"time"

	"github.com/samsa-io/samsa/connect"
)

func TestHeaderFrom(t *testing.T) {
	move := newTransform(t, "HeaderFrom$Value", map[string]string{"fields": "id,trace", "headers": "h_id,h_trace", "operation": "move"})
	in := valueRecord(nil, map[string]any{"id": int32(1), "trace": "abc", "x": true})
	in.Headers = connect.Headers{{Key: "old", Value: "o"}}
	out := apply(t, move, in)
	wantValue(t, out.Value, map[string]any{"x": true})
	if len(out.Headers) != 3 || out.Headers[1] != (connect.Header{Key: "h_id", Value: int32(1)}) || out.Headers[2].Value != "abc" {
		t.Fatalf("headers %+v", out.Headers)
	}
	if len(in.Headers) != 1 {
		t.Fatalf("input headers changed: %+v", in.Headers)
	}

	schema := build("v", "id", connect.Int32Schema, "trace", connect.OptionalString, "x", connect.BooleanSchema)
	out = apply(t, move, valueRecord(schema, structOf(schema, "id", int32(1), "trace", "abc", "x", true)))
	wantSchema(t, out.ValueSchema, build("v", "x", connect.BooleanSchema))
	wantValue(t, get(t, out.Value, "x"), true)
	if h := out.Headers[0]; h.Key != "h_id" || h.Schema != connect.Int32Schema || h.Value != int32(1) {
		t.Fatalf("header %+v", h)
	}

	cp := newTransform(t, "HeaderFrom$Key", map[string]string{"fields": "id", "headers": "k", "operation": "copy"})
	kr := keyRecord(schema, structOf(schema, "id", int32(4), "x", false))
	out = apply(t, cp, kr)
	if out.KeySchema != schema || out.Key != kr.Key || out.Headers[0].Value != int32(4) {
		t.Fatalf("copy changed the key or missed the header: %+v", out)
	}

	_, err := configure("HeaderFrom$Value", map[string]string{"fields": "a,b", "headers": "h", "operation": "copy"})
	wantErr(t, err, "'fields' config must have the same number of elements as 'headers' config.")
	_, err = configure("HeaderFrom$Value", map[string]string{"fields": "a", "headers": "h", "operation": "cut"})
	wantErr(t, err, "Invalid value cut for configuration operation: String must be one of: move, copy")
	_, _, err = move.Apply(valueRecord(nil, "flat"))
	wantErr(t, err, "Only Map objects supported in absence of schema for [header move]")
}

func TestInsertAndDropHeaders(t *testing.T) {
	ins := newTransform(t, "InsertHeader", map[string]string{"header": "src", "value.literal": "42"})
	out := apply(t, ins, valueRecord(nil, 1))
	if h := out.Headers[0]; h.Key != "src" || h.Value != int8(42) || h.Schema.Type != connect.Int8 {
		t.Fatalf("header %+v", h)
	}
	drop := newTransform(t, "DropHeaders", map[string]string{"headers": "a, b"})
	r := valueRecord(nil, 1)
	r.Headers = connect.Headers{{Key: "a"}, {Key: "c"}, {Key: "b"}, {Key: "a"}}
	out = apply(t, drop, r)
	if len(out.Headers) != 1 || out.Headers[0].Key != "c" || len(r.Headers) != 4 {
		t.Fatalf("headers %+v (input %+v)", out.Headers, r.Headers)
	}
	_, err := configure("InsertHeader", map[string]string{"header": "x"})
	wantErr(t, err, `Missing required configuration "value.literal" which has no default value.`)
	_, err = configure("DropHeaders", map[string]string{"headers": ""})
	wantErr(t, err, "Empty list")
}

func TestParseLiteral(t *testing.T) {
	cases := []struct {
		in   string
		typ  connect.Type
		name string
		want any
	}{
		{"", connect.String, "", ""},
		{"hello world", connect.String, "", "hello world"},
		{"true", connect.Boolean, "", true},
		{"true}", connect.String, "", "true}"},
		{"-128", connect.Int8, "", int8(-128)},
		{"128", connect.Int16, "", int16(128)},
		{"70000", connect.Int32, "", int32(70000)},
		{"5000000000", connect.Int64, "", int64(5000000000)},
		{"1.0", connect.Int8, "", int8(1)}, // an exact integer, as Kafka's BigDecimal check
		{"1.5", connect.Float32, "", float32(1.5)},
		{"1e39", connect.Float64, "", 1e39},
		{"99999999999999999999", connect.Bytes, connect.DecimalName, connect.Decimal{Unscaled: bigTen(20, -1), Scale: 0}},
		{"12abc", connect.String, "", "12abc"},
		{"2024-03-05", connect.Int32, connect.DateName, time.Date(2024, 3, 5, 0, 0, 0, 0, time.UTC)},
		{"14:07:09.123Z", connect.Int32, connect.TimeName, time.Date(1970, 1, 1, 14, 7, 9, 123e6, time.UTC)},
		{"2024-03-05T14:07:09.123Z", connect.Int64, connect.TimestampName, ts},
		{"[1, 2, 300]", connect.Array, "", []any{int16(1), int16(2), int16(300)}},
		{`["a", "b"]`, connect.Array, "", []any{"a", "b"}},
		{`{"a": 1, "b": 2}`, connect.Map, "", map[any]any{"a": int8(1), "b": int8(2)}},
		{"[1, ", connect.String, "", "[1, "},
	}
	for _, c := range cases {
		s, v := parseLiteral(c.in)
		if s == nil || s.Type != c.typ || s.Name != c.name {
			t.Fatalf("%q parsed to schema %v, want %s %s", c.in, s, c.typ, c.name)
		}
		wantValue(t, v, c.want)
	}
	if s, v := parseLiteral("null"); s != nil || v != nil {
		t.Fatalf("null = %v %v", s, v)
	}
}

// bigTen is 10^n + add.
func bigTen(n int64, add int64) *big.Int {
	x := new(big.Int).Exp(big.NewInt(10), big.NewInt(n), nil)
	return x.Add(x, big.NewInt(add))
}
