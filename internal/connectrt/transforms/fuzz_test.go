package transforms

import (
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/connect"
)

// FuzzChainConfig feeds NewChain arbitrary connector configs (one
// key=value a line) and runs what it accepts over records of every
// shape: neither may panic.
func FuzzChainConfig(f *testing.F) {
	seeds := []string{
		"transforms=a\ntransforms.a.type=InsertField$Value\ntransforms.a.topic.field=t",
		"transforms=a,b\ntransforms.a.type=Cast$Value\ntransforms.a.spec=int8\ntransforms.b.type=Filter\ntransforms.b.predicate=p\npredicates=p\npredicates.p.type=TopicNameMatches\npredicates.p.pattern=o.*",
		"transforms=x\ntransforms.x.type=ExtractField$Key\ntransforms.x.field=`a.b`.c\ntransforms.x.field.syntax.version=V2",
		"transforms=r\ntransforms.r.type=RegexRouter\ntransforms.r.regex=(.*)-(.*)\ntransforms.r.replacement=$2$1",
		"transforms=t\ntransforms.t.type=TimestampConverter$Value\ntransforms.t.target.type=string\ntransforms.t.format=yyyy-MM-dd'T'HH",
		"transforms=t\ntransforms.t.type=TimestampRouter\ntransforms.t.timestamp.format=yy''MMM",
		"transforms=h\ntransforms.h.type=InsertHeader\ntransforms.h.header=a\ntransforms.h.value.literal=[1,{\"a\":2}]",
		"transforms=f,r\ntransforms.f.type=Flatten$Value\ntransforms.r.type=ReplaceField$Value\ntransforms.r.renames=a:b",
		"transforms=a,a.target\ntransforms.a.type=TimestampConverter$Value\ntransforms.a.target.type=unix",
		"transforms=m\ntransforms.m.type=MaskField$Value\ntransforms.m.fields=a\ntransforms.m.replacement=1.5",
		"transforms=h\ntransforms.h.type=HeaderFrom$Value\ntransforms.h.fields=a\ntransforms.h.headers=b\ntransforms.h.operation=move\ntransforms.h.negate=true",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	schema := build("s", "a", connect.OptionalInt32, "b", optional(build("n", "c", connect.OptionalString)),
		"t", optional(connect.TimestampSchema()), "s", connect.OptionalString)
	records := []connect.Record{
		{Topic: "orders", Value: map[string]any{"a": int32(1), "b": map[string]any{"c": "x"}, "t": int64(5), "s": "2024"}, Key: "k", Timestamp: time.UnixMilli(1)},
		{Topic: "o-x", ValueSchema: schema, Value: structOf(schema, "a", int32(2), "s", "x"), KeySchema: connect.StringSchema, Key: "k"},
		{Topic: "", Value: nil},
		// A struct whose schema is not the record's: transforms must
		// fail on it, not read the wrong fields.
		{Topic: "m", ValueSchema: build("other", "z", connect.OptionalInt64, "a", connect.OptionalString), Value: structOf(schema, "a", int32(3))},
		{Topic: "t", Value: "plain", KeySchema: connect.Int64Schema, Key: int64(3), Headers: connect.Headers{{Key: "a"}}},
	}
	f.Fuzz(func(t *testing.T, text string) {
		props := map[string]string{}
		for _, line := range strings.Split(text, "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				props[k] = v
			}
		}
		c, err := NewChain(props)
		if err != nil {
			return
		}
		defer c.Close()
		for _, r := range records {
			c.Apply(r)
		}
		// config/validate over the same props must not panic either.
		if def, err := EnrichConfigDef(props); err == nil {
			def.Validate(props)
		}
	})
}
