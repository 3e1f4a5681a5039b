package serde

import (
	"errors"
	"strings"
	"testing"

	"github.com/hamba/avro/v2"

	"github.com/samsa-io/samsa/internal/schemaregistry/schema"
)

// testAvroSchema has every kind of Avro type the JSON encoding treats
// differently.
const testAvroSchema = `{"type":"record","name":"Order","namespace":"com.acme","fields":[
 {"name":"id","type":"long"},
 {"name":"qty","type":"int"},
 {"name":"price","type":"double"},
 {"name":"ratio","type":"float"},
 {"name":"paid","type":"boolean"},
 {"name":"note","type":["null","string"],"default":null},
 {"name":"tags","type":{"type":"array","items":"string"}},
 {"name":"attrs","type":{"type":"map","values":"int"}},
 {"name":"status","type":{"type":"enum","name":"Status","symbols":["NEW","PAID"]}},
 {"name":"raw","type":"bytes"},
 {"name":"hash","type":{"type":"fixed","name":"Hash","size":2}},
 {"name":"at","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"item","type":["null",{"type":"record","name":"Item","fields":[{"name":"sku","type":"string"}]}]},
 {"name":"prio","type":"int","default":3}
]}`

func parseTestAvro(t testing.TB, text string) avro.Schema {
	t.Helper()
	s, err := schema.Parse(schema.Avro, text, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s.(interface{ AvroSchema() avro.Schema }).AvroSchema()
}

func TestAvroJSONRoundTrip(t *testing.T) {
	s := parseTestAvro(t, testAvroSchema)
	for _, c := range []struct{ in, out string }{
		{
			`{"id":1,"qty":2,"price":1.5,"ratio":0.25,"paid":true,"note":{"string":"hi"},"tags":["a","b"],"attrs":{"x":1,"y":2},"status":"PAID","raw":"\u0000\u00ff","hash":"ab","at":1700000000000,"item":{"com.acme.Item":{"sku":"s1"}},"prio":7}`,
			`{"id":1,"qty":2,"price":1.5,"ratio":0.25,"paid":true,"note":{"string":"hi"},"tags":["a","b"],"attrs":{"x":1,"y":2},"status":"PAID","raw":"\u0000ÿ","hash":"ab","at":1700000000000,"item":{"com.acme.Item":{"sku":"s1"}},"prio":7}`,
		},
		{ // defaults fill missing fields; empty array and map; null union
			`{"id":-9,"qty":0,"price":-0.5,"ratio":1e3,"paid":false,"tags":[],"attrs":{},"status":"NEW","raw":"","hash":"zz","at":0,"item":null}`,
			`{"id":-9,"qty":0,"price":-0.5,"ratio":1000,"paid":false,"note":null,"tags":[],"attrs":{},"status":"NEW","raw":"","hash":"zz","at":0,"item":null,"prio":3}`,
		},
	} {
		bin, err := avroJSONToBinary(s, []byte(c.in))
		if err != nil {
			t.Fatalf("encode %s: %v", c.in, err)
		}
		got, err := avroBinaryToJSON(s, bin)
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		if string(got) != c.out {
			t.Errorf("round trip:\n got %s\nwant %s", got, c.out)
		}
		// hamba reads what we wrote: the binary is Avro's.
		var native map[string]any
		if err := avro.Unmarshal(s, bin, &native); err != nil {
			t.Fatalf("hamba cannot read it: %v", err)
		}
		if native["status"] != strings.Split(strings.Split(c.out, `"status":"`)[1], `"`)[0] || native["prio"] == nil {
			t.Errorf("hamba reads %v", native)
		}
	}
}

func TestAvroJSONErrors(t *testing.T) {
	s := parseTestAvro(t, `{"type":"record","name":"R","fields":[{"name":"a","type":"int"},{"name":"u","type":["null","string"],"default":null},{"name":"e","type":{"type":"enum","name":"E","symbols":["X"]},"default":"X"}]}`)
	for _, c := range []struct{ in, want string }{
		{`{"a":1.5}`, "$.a: 1.5 is not an Avro int"},
		{`{"a":4294967296}`, "is not an Avro int"},
		{`{"a":"1"}`, "$.a: want an integer, got a string"},
		{`{}`, `field "a" of record R is missing and has no default`},
		{`{"a":1,"b":2}`, `record R has no field "b"`},
		{`{"a":1,"u":"x"}`, `a union's value is null or {"<branch type>": value}, one of [null, string]`},
		{`{"a":1,"u":{"int":1}}`, `"int" is not a branch of union [null, string]`},
		{`{"a":1,"e":"Y"}`, `"Y" is not a symbol of enum E [X]`},
		{`{"a":1} {}`, "more than one value"},
		{`{"a":`, "invalid JSON"},
		{`[]`, "want an object (record R), got an array"},
	} {
		_, err := avroJSONToBinary(s, []byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.in, err, c.want)
		}
	}
}

func TestAvroBinaryMismatch(t *testing.T) {
	s := parseTestAvro(t, testAvroSchema)
	good, err := avroJSONToBinary(s, []byte(`{"id":1,"qty":2,"price":1.5,"ratio":0.25,"paid":true,"tags":[],"attrs":{},"status":"NEW","raw":"","hash":"ab","at":0,"item":null}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"truncated", good[:len(good)-1]},
		{"trailing byte", append(append([]byte{}, good...), 0)},
		{"string of another schema", []byte{6, 'a', 'b', 'c'}},
	} {
		_, err := avroBinaryToJSON(s, c.b)
		if !errors.Is(err, ErrPayloadMismatch) {
			t.Errorf("%s: %v, want ErrPayloadMismatch", c.name, err)
		}
	}
	// An array of nulls announcing 2^60 entries in a few bytes.
	nulls := parseTestAvro(t, `{"type":"array","items":"null"}`)
	w := avro.NewWriter(nil, 16)
	w.WriteLong(1 << 60)
	if _, err := avroBinaryToJSON(nulls, w.Buffer()); !errors.Is(err, ErrPayloadMismatch) {
		t.Errorf("huge count of nulls: %v", err)
	}
}

// FuzzAvroBinaryToJSON: any bytes decode or fail with a clear error,
// never a panic, and what decodes encodes back to the same bytes.
func FuzzAvroBinaryToJSON(f *testing.F) {
	s := parseTestAvro(f, testAvroSchema)
	seed, err := avroJSONToBinary(s, []byte(`{"id":1,"qty":2,"price":1.5,"ratio":0.25,"paid":true,"tags":["x"],"attrs":{"k":1},"status":"NEW","raw":"r","hash":"ab","at":0,"item":{"com.acme.Item":{"sku":"s"}}}`))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		text, err := avroBinaryToJSON(s, b)
		if err != nil {
			if !errors.Is(err, ErrPayloadMismatch) {
				t.Fatalf("error without ErrPayloadMismatch: %v", err)
			}
			return
		}
		if _, err := avroJSONToBinary(s, text); err != nil {
			t.Fatalf("decoded %s does not encode again: %v", text, err)
		}
	})
}

// TestAvroJSONDefaults: a missing field of every kind takes its default,
// written as hamba parsed it (a union's default is its first branch's).
func TestAvroJSONDefaults(t *testing.T) {
	s := parseTestAvro(t, `{"type":"record","name":"R","fields":[
 {"name":"b","type":"bytes","default":"\u00ffA"},
 {"name":"f","type":{"type":"fixed","name":"F","size":2},"default":"ab"},
 {"name":"r","type":{"type":"record","name":"In","fields":[{"name":"x","type":"int"}]},"default":{"x":4}},
 {"name":"e","type":{"type":"enum","name":"E","symbols":["A","B"]},"default":"B"},
 {"name":"a","type":{"type":"array","items":"long"},"default":[1,2]},
 {"name":"m","type":{"type":"map","values":"string"},"default":{"k":"v"}},
 {"name":"u","type":["string","null"],"default":"s"},
 {"name":"d","type":"double","default":1.5},
 {"name":"l","type":"long","default":9}]}`)
	bin, err := avroJSONToBinary(s, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := avroBinaryToJSON(s, bin)
	want := `{"b":"ÿA","f":"ab","r":{"x":4},"e":"B","a":[1,2],"m":{"k":"v"},"u":{"string":"s"},"d":1.5,"l":9}`
	if err != nil || string(got) != want {
		t.Errorf("defaults: %s, %v\nwant %s", got, err, want)
	}
}

// The per-record cost of samsa produce and consume with an Avro schema.
func BenchmarkAvroJSON(b *testing.B) {
	s := parseTestAvro(b, testAvroSchema)
	in := []byte(`{"id":1,"qty":2,"price":1.5,"ratio":0.25,"paid":true,"note":{"string":"hi"},"tags":["a","b"],"attrs":{"x":1,"y":2},"status":"PAID","raw":"ab","hash":"ab","at":1700000000000,"item":{"com.acme.Item":{"sku":"s1"}},"prio":7}`)
	bin, err := avroJSONToBinary(s, in)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("encode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := avroJSONToBinary(s, in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := avroBinaryToJSON(s, bin); err != nil {
				b.Fatal(err)
			}
		}
	})
}
