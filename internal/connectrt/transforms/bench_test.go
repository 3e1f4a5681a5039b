package transforms

import (
	"testing"

	"github.com/samsa-io/samsa/connect"
)

// benchChain is a typical source chain: add the topic, cast a field,
// route by regex.
func benchChain(b *testing.B) *Chain {
	c, err := NewChain(map[string]string{
		"transforms":                    "insert,cast,route",
		"transforms.insert.type":        "InsertField$Value",
		"transforms.insert.topic.field": "topic",
		"transforms.cast.type":          "Cast$Value",
		"transforms.cast.spec":          "id:string",
		"transforms.route.type":         "RegexRouter",
		"transforms.route.regex":        "(.*)",
		"transforms.route.replacement":  "mirror.$1",
	})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

func BenchmarkChainSchemaless(b *testing.B) {
	c := benchChain(b)
	r := valueRecord(nil, map[string]any{"id": int64(42), "name": "ann", "amount": 12.5})
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := c.Apply(r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkChainStruct(b *testing.B) {
	c := benchChain(b)
	s := build("order", "id", connect.Int64Schema, "name", connect.StringSchema, "amount", connect.Float64Schema)
	r := valueRecord(s, structOf(s, "id", int64(42), "name", "ann", "amount", 12.5))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := c.Apply(r); err != nil {
			b.Fatal(err)
		}
	}
}
